// Recipe: the Standard Webhooks spec, https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
// (Svix, which uses svix- headers: https://docs.svix.com/receiving/verifying-payloads/how-manual).
// Signed content "<id>.<timestamp>.<raw body>"; key = base64-decode of what follows "whsec_";
// the signature header is a space-separated list of "v1,<base64>" (several while a secret is rotated,
// and "v1a,…" for the asymmetric ed25519 scheme, which an HMAC check cannot use).
import { decodeBase64, encodeBase64 } from '../bytes.js';
import { findHeaderValues, hasHeader } from '../header-values.js';
import {
  decodeBase64Mac,
  decodeMacs,
  explainHeaderProblem,
  malformedHeader,
  readSingleHeader,
  readTimestampHeader,
  type HeaderReading,
  type KeyReading,
  type ProviderScheme,
} from '../provider-scheme.js';

const SECRET_PREFIX = 'whsec_';

/** Svix sends the same three headers under its own prefix; a request uses one prefix throughout. */
function choosePrefix(headers: Parameters<ProviderScheme['readHeaders']>[0]): 'webhook-' | 'svix-' {
  if (hasHeader(headers, 'webhook-signature')) return 'webhook-';
  if (hasHeader(headers, 'svix-signature')) return 'svix-';
  return hasHeader(headers, 'svix-id') || hasHeader(headers, 'svix-timestamp') ? 'svix-' : 'webhook-';
}

function readStandardHeaders(headers: Parameters<ProviderScheme['readHeaders']>[0]): HeaderReading {
  const prefix = choosePrefix(headers);
  const found = findHeaderValues(headers, `${prefix}signature`);
  const first = found[0];
  if (first === undefined) {
    return {
      ok: false,
      reason: 'missing-header',
      message:
        'There is no webhook-signature (or svix-signature) header, so this request was not signed the Standard Webhooks way, or something on the way dropped the header.',
    };
  }
  const name = first.name;
  const id = readSingleHeader(headers, `${prefix}id`);
  if (id.kind !== 'present') {
    return {
      ...explainHeaderProblem(
        id,
        `${prefix}id`,
        `There is no ${prefix}id header, and the message id is part of what is signed, so the signature cannot be recomputed without it.`,
      ),
      signatureHeader: name,
    };
  }
  const timestamp = readTimestampHeader(
    headers,
    `${prefix}timestamp`,
    `There is no ${prefix}timestamp header, and the timestamp is part of what is signed, so the signature cannot be recomputed without it.`,
  );
  if (!timestamp.ok) return { ...timestamp.problem, signatureHeader: name };

  const entries = found.flatMap((header) => header.value.split(/\s+/)).filter((entry) => entry !== '');
  const received = entries.filter((entry) => entry.startsWith('v1,'));
  if (received.length === 0) {
    const message = entries.some((entry) => entry.startsWith('v1a,'))
      ? `${name} carries only asymmetric "v1a," (ed25519) signatures; Hookwatch checks the shared-secret "v1," scheme only.`
      : `${name} should hold space-separated "v1,<base64>" signatures, and it has none.`;
    return malformedHeader(message, entries, name);
  }
  const macs = decodeMacs(received, (entry) => decodeBase64Mac(entry.slice(3)));
  if (macs.length === 0) {
    return malformedHeader(
      `Each "v1," in ${name} should be followed by the base64 of a 32-byte digest (44 characters), and none is.`,
      received,
      name,
    );
  }
  return {
    ok: true,
    parts: {
      signatureHeader: name,
      received,
      macs,
      timestamp: timestamp.timestamp,
      signedPrefix: `${id.value}.${timestamp.text}.`,
    },
  };
}

function readStandardKey(secret: string): KeyReading {
  if (secret.startsWith('whsk_') || secret.startsWith('whpk_')) {
    return {
      ok: false,
      message:
        'That is an asymmetric (ed25519) key; Hookwatch checks the shared-secret scheme, whose secrets start with whsec_.',
    };
  }
  // The reference libraries also take the bare base64, but the spec always shows the prefix, and
  // asking for it catches a Stripe or GitHub secret pasted here before it turns into a puzzling mismatch.
  if (!secret.startsWith(SECRET_PREFIX)) {
    return {
      ok: false,
      message:
        'Standard Webhooks (and Svix) secrets start with whsec_ followed by base64; paste the whole secret as the sender shows it.',
    };
  }
  const key = decodeBase64(secret.slice(SECRET_PREFIX.length));
  if (key === undefined || key.length === 0) {
    return {
      ok: false,
      message:
        'The part after whsec_ is not valid base64, so it cannot be the key; check that the secret was copied whole and unchanged.',
    };
  }
  return { ok: true, key };
}

export const standardWebhooksScheme: ProviderScheme = {
  provider: 'standard-webhooks',
  label: 'Standard Webhooks',
  readHeaders: readStandardHeaders,
  readKey: readStandardKey,
  formatSignature: (mac) => `v1,${encodeBase64(mac)}`,
};
