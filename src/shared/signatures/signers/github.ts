// GitHub signs the raw body alone: X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256 (see providers/github.ts).
// It still sends the legacy SHA-1 X-Hub-Signature beside it; a copy that keeps a stale one would
// fail any receiver that still checks it, so it is signed again when the request carries it.
import { encodeHex } from '../bytes.js';
import { hasHeader } from '../header-values.js';
import { computeHmacSha256 } from '../hmac-sha256.js';
import type { Signer } from './signer.js';

async function computeHmacSha1(key: Uint8Array, content: Uint8Array): Promise<Uint8Array> {
  const subtle = globalThis.crypto.subtle;
  const cryptoKey = await subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-1' }, false, [
    'sign',
  ]);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, new Uint8Array(content)));
}

export const signGithub: Signer = async ({ headers, body, key }) => {
  const signed: Array<[string, string]> = [
    ['X-Hub-Signature-256', `sha256=${encodeHex(await computeHmacSha256(key, body))}`],
  ];
  if (hasHeader(headers, 'X-Hub-Signature'))
    signed.push(['X-Hub-Signature', `sha1=${encodeHex(await computeHmacSha1(key, body))}`]);
  return signed;
};
