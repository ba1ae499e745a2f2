import { concatBytes, encodeUtf8 } from './bytes.js';
import { computeHmacSha256, compareInConstantTime } from './hmac-sha256.js';
import type { ProviderScheme, SignatureParts } from './provider-scheme.js';
import { githubScheme } from './providers/github.js';
import { shopifyScheme } from './providers/shopify.js';
import { slackScheme } from './providers/slack.js';
import { standardWebhooksScheme } from './providers/standard-webhooks.js';
import { stripeScheme } from './providers/stripe.js';
import { suggestMismatchCause } from './secret-hints.js';
import { DEFAULT_TOLERANCE_SECONDS, describeSkew, measureSkew } from './timestamp.js';
import type { Provider, SignedRequest, Verdict, VerificationOptions } from './types.js';

const SCHEMES: Readonly<Record<Provider, ProviderScheme>> = {
  github: githubScheme,
  stripe: stripeScheme,
  slack: slackScheme,
  shopify: shopifyScheme,
  'standard-webhooks': standardWebhooksScheme,
};

/**
 * Checks a stored request's signature and says why it failed. Checks run in a fixed order
 * (truncated → headers → secret → timestamp → compare) so the verdict names the first thing to fix.
 */
export async function verifySignature(
  provider: Provider,
  request: SignedRequest,
  secret: string,
  options: VerificationOptions = {},
): Promise<Verdict> {
  const scheme = SCHEMES[provider];
  if (request.truncated) {
    return {
      provider,
      ok: false,
      reason: 'truncated',
      message: `Only the first ${request.body.length} bytes of the body were stored (it passed the MAX_BODY_BYTES cap), and the signature covers all of it, so it cannot be checked. Raise MAX_BODY_BYTES above the body's size to check requests this large.`,
    };
  }

  const reading = scheme.readHeaders(request.headers);
  if (!reading.ok) {
    const { ok: _ok, ...problem } = reading;
    return { provider, ok: false, ...problem };
  }
  const parts = reading.parts;
  const signatureHeader = parts.signatureHeader;

  if (secret.trim() === '') {
    return {
      provider,
      ok: false,
      reason: 'bad-secret',
      message: `No secret was given; paste the signing secret from ${scheme.label}'s webhook settings.`,
      signatureHeader,
    };
  }
  const key = scheme.readKey(secret);
  if (!key.ok) return { provider, ok: false, reason: 'bad-secret', message: key.message, signatureHeader };

  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (parts.timestamp !== undefined) {
    const skewSeconds = measureSkew(parts.timestamp.seconds, options.nowMs ?? Date.now(), toleranceSeconds);
    if (skewSeconds !== 0) {
      return {
        provider,
        ok: false,
        reason: 'timestamp-out-of-tolerance',
        message: describeSkew(parts.timestamp.header, skewSeconds, toleranceSeconds, parts.timestamp.seconds),
        skewSeconds,
        signatureHeader,
      };
    }
  }

  // The exact stored bytes, never a decoded and re-encoded body: one changed byte changes the digest.
  const content = concatBytes(encodeUtf8(parts.signedPrefix), request.body);
  const mac = await computeHmacSha256(key.key, content);
  // Every candidate is compared (no early exit), so timing does not reveal which one matched.
  const matched = parts.macs.map((candidate) => compareInConstantTime(candidate, mac)).includes(true);
  if (matched) {
    return {
      provider,
      ok: true,
      reason: 'valid',
      message: describeMatch(scheme, parts, toleranceSeconds),
      signatureHeader,
    };
  }
  return {
    provider,
    ok: false,
    reason: 'mismatch',
    message: `${describeMiss(parts)} ${suggestMismatchCause(provider, secret)}`,
    expected: scheme.formatSignature(mac),
    received: parts.received,
    signatureHeader,
  };
}

function describeMatch(scheme: ProviderScheme, parts: SignatureParts, toleranceSeconds: number): string {
  const signed = `The signature in ${parts.signatureHeader} matches: ${scheme.label} signed exactly these stored bytes with this secret`;
  return parts.timestamp === undefined
    ? `${signed}.`
    : `${signed}, and the timestamp is within the ${toleranceSeconds} s tolerance.`;
}

function describeMiss(parts: SignatureParts): string {
  const what = parts.timestamp === undefined ? 'the stored body' : 'the stored body and the signed headers';
  return parts.received.length === 1
    ? `The signature in ${parts.signatureHeader} does not match the one computed from ${what} with this secret.`
    : `None of the ${parts.received.length} signatures in ${parts.signatureHeader} matches the one computed from ${what} with this secret.`;
}
