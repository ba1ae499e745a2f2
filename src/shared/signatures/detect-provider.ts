import { hasHeader } from './header-values.js';
import type { Provider, SignedRequest } from './types.js';

// Signature headers decide first; headers that only name the sender come second, so that a GitHub
// delivery from a webhook without a secret still gets a verdict explaining what is missing.
const SIGNATURE_HEADERS: ReadonlyArray<readonly [string, Provider]> = [
  ['x-hub-signature-256', 'github'],
  ['stripe-signature', 'stripe'],
  ['x-slack-signature', 'slack'],
  ['x-shopify-hmac-sha256', 'shopify'],
  ['webhook-signature', 'standard-webhooks'],
  ['svix-signature', 'standard-webhooks'],
];

const SENDER_HEADERS: ReadonlyArray<readonly [string, Provider]> = [
  ['x-github-event', 'github'],
  ['x-hub-signature', 'github'],
  ['x-slack-request-timestamp', 'slack'],
  ['x-shopify-topic', 'shopify'],
  ['webhook-id', 'standard-webhooks'],
  ['svix-id', 'standard-webhooks'],
];

/** Guesses the provider from header names, or undefined. */
export function detectProvider(headers: SignedRequest['headers']): Provider | undefined {
  for (const [name, provider] of [...SIGNATURE_HEADERS, ...SENDER_HEADERS]) {
    if (hasHeader(headers, name)) return provider;
  }
  return undefined;
}
