// Standard Webhooks (and Svix under svix- names): <prefix>timestamp = now, <prefix>signature =
// "v1," + base64 HMAC-SHA256(decoded whsec_ key, "<id>.<timestamp>.<body>") (see providers/standard-webhooks.ts).
// The message id is kept: receivers use it to drop repeats, and a replay is meant to arrive again
// as the same message. A request without one gets a fresh one.
import { concatBytes, encodeBase64, encodeUtf8 } from '../bytes.js';
import { hasHeader } from '../header-values.js';
import { computeHmacSha256 } from '../hmac-sha256.js';
import { readSingleHeader } from '../provider-scheme.js';
import type { Signer } from './signer.js';

export const signStandardWebhooks: Signer = async ({ headers, body, key, nowSeconds, newMessageId }) => {
  // One prefix throughout, the one the request already uses (as the verifier reads it).
  const svix =
    !hasHeader(headers, 'webhook-signature') &&
    (hasHeader(headers, 'svix-signature') || hasHeader(headers, 'svix-id') || hasHeader(headers, 'svix-timestamp'));
  const prefix = svix ? 'svix-' : 'webhook-';
  const id = readSingleHeader(headers, `${prefix}id`);
  const messageId = id.kind === 'present' ? id.value : newMessageId();
  const mac = await computeHmacSha256(key, concatBytes(encodeUtf8(`${messageId}.${nowSeconds}.`), body));
  return [
    [`${prefix}id`, messageId],
    [`${prefix}timestamp`, String(nowSeconds)],
    [`${prefix}signature`, `v1,${encodeBase64(mac)}`],
  ];
};
