// Slack: X-Slack-Request-Timestamp = now, X-Slack-Signature = "v0=" + hex HMAC-SHA256(secret, "v0:<ts>:<body>")
// (see providers/slack.ts).
import { concatBytes, encodeHex, encodeUtf8 } from '../bytes.js';
import { computeHmacSha256 } from '../hmac-sha256.js';
import type { Signer } from './signer.js';

export const signSlack: Signer = async ({ body, key, nowSeconds }) => {
  const mac = await computeHmacSha256(key, concatBytes(encodeUtf8(`v0:${nowSeconds}:`), body));
  return [
    ['X-Slack-Request-Timestamp', String(nowSeconds)],
    ['X-Slack-Signature', `v0=${encodeHex(mac)}`],
  ];
};
