import type { Provider } from './types.js';

// Slack signing secrets, as Slack issues them, are 32 lowercase hex characters.
const SLACK_SECRET_PATTERN = /^[0-9a-f]{32}$/;

/**
 * The most likely reason a signature did not match, judged from the secret's shape alone. Written
 * in terms of prefixes and formats, never the secret's characters, so a verdict is safe to show.
 */
export function suggestMismatchCause(provider: Provider, secret: string): string {
  if (secret !== secret.trim()) {
    return 'The secret starts or ends with whitespace, which usually comes with copying; try it trimmed.';
  }
  const looksStandard = secret.startsWith('whsec_');
  if (looksStandard && (provider === 'github' || provider === 'slack' || provider === 'shopify')) {
    return "The secret starts with whsec_, the format of Stripe and Standard Webhooks secrets, so it is probably another sender's secret.";
  }
  if (provider === 'stripe' && !looksStandard) {
    return "Stripe signing secrets start with whsec_ and this one does not, so it is probably not the endpoint's signing secret.";
  }
  if (provider === 'stripe') {
    return 'Check that the secret belongs to this very endpoint (each endpoint, and each `stripe listen` session, has its own), and that nothing re-encoded the body on the way.';
  }
  if (provider === 'slack' && !SLACK_SECRET_PATTERN.test(secret)) {
    return 'Slack signing secrets are 32 hex characters and this one is not, so it may be another credential (the verification token or the client secret).';
  }
  return 'Either the secret is not the one this sender signs with, or the body changed on the way (a proxy or framework re-encoding it).';
}
