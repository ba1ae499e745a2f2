// Recipe: https://shopify.dev/docs/apps/build/webhooks/verify-deliveries
// X-Shopify-Hmac-SHA256: base64 HMAC-SHA256 of the raw body, keyed with the app's client secret as text.
import { encodeBase64 } from '../bytes.js';
import { findHeaderValues } from '../header-values.js';
import {
  decodeBase64Mac,
  decodeMacs,
  malformedHeader,
  utf8KeyUnless,
  type HeaderReading,
  type ProviderScheme,
} from '../provider-scheme.js';

const SIGNATURE_HEADER = 'X-Shopify-Hmac-Sha256';
// Admin API access tokens: shpat_ (admin), shpca_ (custom app), shppa_ (private app). None signs webhooks.
const ACCESS_TOKEN_PATTERN = /^shp(at|ca|pa)_/;

function readShopifyHeaders(headers: Parameters<ProviderScheme['readHeaders']>[0]): HeaderReading {
  const found = findHeaderValues(headers, SIGNATURE_HEADER);
  const first = found[0];
  if (first === undefined) {
    return {
      ok: false,
      reason: 'missing-header',
      message:
        'There is no X-Shopify-Hmac-Sha256 header. Shopify adds it to every HTTPS webhook delivery, so this request did not come from Shopify, or something on the way dropped the header.',
    };
  }
  const received = found.map((header) => header.value);
  const macs = decodeMacs(received, decodeBase64Mac);
  if (macs.length === 0) {
    return malformedHeader(
      `${first.name} should be the base64 of a 32-byte digest (44 characters ending in "="), and it is not; Shopify writes base64, not hex.`,
      received,
      first.name,
    );
  }
  return { ok: true, parts: { signatureHeader: first.name, received, macs, signedPrefix: '' } };
}

const readShopifyKey = utf8KeyUnless(
  ACCESS_TOKEN_PATTERN,
  "That is a Shopify access token, not a signing secret. App webhooks are signed with the app's client secret; webhooks made in the store admin with the key shown under Settings → Notifications → Webhooks.",
);

export const shopifyScheme: ProviderScheme = {
  provider: 'shopify',
  label: 'Shopify',
  readHeaders: readShopifyHeaders,
  readKey: readShopifyKey,
  formatSignature: encodeBase64,
};
