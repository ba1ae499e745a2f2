// Shopify: X-Shopify-Hmac-Sha256 = base64 HMAC-SHA256(secret, body), no timestamp (see providers/shopify.ts).
import { encodeBase64 } from '../bytes.js';
import { computeHmacSha256 } from '../hmac-sha256.js';
import type { Signer } from './signer.js';

export const signShopify: Signer = async ({ body, key }) => [
  ['X-Shopify-Hmac-Sha256', encodeBase64(await computeHmacSha256(key, body))],
];
