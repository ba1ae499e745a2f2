// Recipe: https://docs.stripe.com/webhooks#verify-manually (confirmed against Stripe's own library,
// https://www.rubydoc.info/gems/stripe/Stripe/Webhook/Signature: compute_signature hexdigests
// "#{timestamp}.#{payload}" with the secret string itself).
// Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…][,v0=<hex>]. Several v1 appear while a secret is rolled;
// v0 is a dummy Stripe adds in test mode, signed with a key it never publishes.
// The whsec_… secret is the HMAC key as written, prefix included: unlike Standard Webhooks, nothing is base64-decoded.
import { encodeHex } from '../bytes.js';
import { findHeaderValues } from '../header-values.js';
import {
  decodeHexMac,
  decodeMacs,
  malformedHeader,
  quoteValue,
  utf8KeyUnless,
  type HeaderReading,
  type ProviderScheme,
} from '../provider-scheme.js';
import { parseUnixSeconds } from '../timestamp.js';

const SIGNATURE_HEADER = 'Stripe-Signature';
// Secret keys (sk_), publishable keys (pk_) and restricted keys (rk_) are API credentials, never signing secrets.
const API_KEY_PATTERN = /^(sk|pk|rk)_/;

interface StripeElements {
  timestamps: string[];
  v1: string[];
  hasV0: boolean;
}

function splitElements(value: string): StripeElements {
  const elements: StripeElements = { timestamps: [], v1: [], hasV0: false };
  for (const element of value.split(',')) {
    const separator = element.indexOf('=');
    if (separator < 0) continue;
    const key = element.slice(0, separator).trim();
    const text = element.slice(separator + 1).trim();
    if (key === 't') elements.timestamps.push(text);
    else if (key === 'v1') elements.v1.push(text);
    else if (key === 'v0') elements.hasV0 = true;
  }
  return elements;
}

function readStripeHeaders(headers: Parameters<ProviderScheme['readHeaders']>[0]): HeaderReading {
  const found = findHeaderValues(headers, SIGNATURE_HEADER);
  const first = found[0];
  if (first === undefined) {
    return {
      ok: false,
      reason: 'missing-header',
      message:
        'There is no Stripe-Signature header. Stripe signs every event it sends to a webhook endpoint, so this request did not come from Stripe, or something on the way dropped the header.',
    };
  }
  const name = first.name;
  // A repeated header means the same as one comma-joined value (RFC 9110), which is how Stripe's own libraries see it.
  const elements = splitElements(found.map((header) => header.value).join(','));
  const received = elements.v1.map((text) => `v1=${text}`);
  const distinctTimestamps = [...new Set(elements.timestamps)];
  const timestampText = distinctTimestamps[0];
  if (timestampText === undefined) {
    return malformedHeader(
      `${name} has no "t=" timestamp, and Stripe signs the timestamp with the body.`,
      received,
      name,
    );
  }
  if (distinctTimestamps.length > 1) {
    return malformedHeader(
      `${name} carries ${distinctTimestamps.length} different "t=" timestamps, so there is no telling which one was signed.`,
      received,
      name,
    );
  }
  const seconds = parseUnixSeconds(timestampText);
  if (seconds === undefined) {
    return malformedHeader(
      `The "t=" in ${name} should be whole Unix seconds, but it is ${quoteValue(timestampText)}.`,
      received,
      name,
    );
  }
  if (elements.v1.length === 0) {
    const message = elements.hasV0
      ? `${name} carries only a "v0=" signature: that is the test-mode dummy, which nobody can verify, and the real one would be "v1=".`
      : `${name} has no "v1=" signature, which is the only scheme Stripe signs with.`;
    return malformedHeader(message, [], name);
  }
  const macs = decodeMacs(elements.v1, decodeHexMac);
  if (macs.length === 0) {
    return malformedHeader(`Each "v1=" in ${name} should be 64 hex digits, and none is.`, received, name);
  }
  return {
    ok: true,
    parts: {
      signatureHeader: name,
      received,
      macs,
      timestamp: { header: `The "t=" in ${name}`, seconds },
      signedPrefix: `${timestampText}.`,
    },
  };
}

const readStripeKey = utf8KeyUnless(
  API_KEY_PATTERN,
  "That is a Stripe API key, not a webhook signing secret. The signing secret starts with whsec_ and is on the webhook endpoint's page in the Dashboard (or printed by `stripe listen`).",
);

export const stripeScheme: ProviderScheme = {
  provider: 'stripe',
  label: 'Stripe',
  readHeaders: readStripeHeaders,
  readKey: readStripeKey,
  formatSignature: (mac) => `v1=${encodeHex(mac)}`,
};
