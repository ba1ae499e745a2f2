// Stripe-Signature: t=<now>,v1=<hex HMAC-SHA256(whole whsec_ secret, "<t>.<body>")> (see providers/stripe.ts).
// A fresh signature carries one v1 only: the old ones were made for another timestamp.
import { concatBytes, encodeHex, encodeUtf8 } from '../bytes.js';
import { computeHmacSha256 } from '../hmac-sha256.js';
import type { Signer } from './signer.js';

export const signStripe: Signer = async ({ body, key, nowSeconds }) => {
  const mac = await computeHmacSha256(key, concatBytes(encodeUtf8(`${nowSeconds}.`), body));
  return [['Stripe-Signature', `t=${nowSeconds},v1=${encodeHex(mac)}`]];
};
