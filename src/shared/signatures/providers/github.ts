// Recipe: https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>; the secret is used as its UTF-8 bytes.
import { encodeHex, encodeUtf8 } from '../bytes.js';
import { findHeaderValues, hasHeader } from '../header-values.js';
import {
  decodeHexMac,
  decodeMacs,
  malformedHeader,
  type HeaderReading,
  type ProviderScheme,
} from '../provider-scheme.js';

const SIGNATURE_HEADER = 'X-Hub-Signature-256';
const SIGNATURE_PATTERN = /^sha256=(.*)$/i;

function readGithubHeaders(headers: Parameters<ProviderScheme['readHeaders']>[0]): HeaderReading {
  const found = findHeaderValues(headers, SIGNATURE_HEADER);
  const first = found[0];
  if (first === undefined) {
    const message = hasHeader(headers, 'X-Hub-Signature')
      ? 'Only the legacy SHA-1 X-Hub-Signature is present, and Hookwatch checks X-Hub-Signature-256, which GitHub sends beside it; a sender that sends SHA-1 alone is not GitHub.'
      : 'There is no X-Hub-Signature-256 header. GitHub adds it only when the webhook has a secret: set one in the webhook settings and redeliver.';
    return { ok: false, reason: 'missing-header', message };
  }
  const received = found.map((header) => header.value);
  const macs = decodeMacs(received, (value) => decodeHexMac(SIGNATURE_PATTERN.exec(value)?.[1] ?? ''));
  if (macs.length === 0) {
    return malformedHeader(
      `${first.name} should read "sha256=" and 64 hex digits, and it does not, so GitHub's signer did not write it as it arrived here.`,
      received,
      first.name,
    );
  }
  return { ok: true, parts: { signatureHeader: first.name, received, macs, signedPrefix: '' } };
}

export const githubScheme: ProviderScheme = {
  provider: 'github',
  label: 'GitHub',
  readHeaders: readGithubHeaders,
  readKey: (secret) => ({ ok: true, key: encodeUtf8(secret) }),
  formatSignature: (mac) => `sha256=${encodeHex(mac)}`,
};
