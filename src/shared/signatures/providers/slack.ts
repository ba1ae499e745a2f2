// Recipe: https://api.slack.com/authentication/verifying-requests-from-slack
// X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:" + X-Slack-Request-Timestamp + ":" + raw body)>.
import { encodeHex } from '../bytes.js';
import { findHeaderValues } from '../header-values.js';
import {
  decodeHexMac,
  decodeMacs,
  malformedHeader,
  readTimestampHeader,
  utf8KeyUnless,
  type HeaderReading,
  type ProviderScheme,
} from '../provider-scheme.js';

const SIGNATURE_HEADER = 'X-Slack-Signature';
const TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';
const SIGNATURE_PATTERN = /^v0=(.*)$/;

function readSlackHeaders(headers: Parameters<ProviderScheme['readHeaders']>[0]): HeaderReading {
  const found = findHeaderValues(headers, SIGNATURE_HEADER);
  const first = found[0];
  if (first === undefined) {
    return {
      ok: false,
      reason: 'missing-header',
      message:
        'There is no X-Slack-Signature header. Slack signs every request it sends to an app, so this one did not come from Slack, or something on the way dropped the header.',
    };
  }
  const timestamp = readTimestampHeader(
    headers,
    TIMESTAMP_HEADER,
    'There is no X-Slack-Request-Timestamp header, and Slack signs the timestamp with the body, so the signature cannot be recomputed without it.',
  );
  if (!timestamp.ok) return { ...timestamp.problem, signatureHeader: first.name };
  const received = found.map((header) => header.value);
  const macs = decodeMacs(received, (value) => decodeHexMac(SIGNATURE_PATTERN.exec(value)?.[1] ?? ''));
  if (macs.length === 0) {
    return malformedHeader(
      `${first.name} should read "v0=" and 64 hex digits, and it does not, so Slack's signer did not write it as it arrived here.`,
      received,
      first.name,
    );
  }
  return {
    ok: true,
    parts: {
      signatureHeader: first.name,
      received,
      macs,
      timestamp: timestamp.timestamp,
      signedPrefix: `v0:${timestamp.text}:`,
    },
  };
}

// Bot, user and app tokens all start "xox"; people paste them because they are the credential they use most.
const readSlackKey = utf8KeyUnless(
  /^xox[a-z]?-/,
  "That is a Slack token, not the signing secret. The signing secret is under your app's Basic Information → App Credentials.",
);

export const slackScheme: ProviderScheme = {
  provider: 'slack',
  label: 'Slack',
  readHeaders: readSlackHeaders,
  readKey: readSlackKey,
  formatSignature: (mac) => `v0=${encodeHex(mac)}`,
};
