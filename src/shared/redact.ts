/** What kept endpoints store instead of a secret value (README, kept endpoints). */
export const REDACTED = '[redacted]';
/**
 * REDACTED as written inside the stored request target (a secret query value, the user-info):
 * percent-encoded, so the target stays a valid URL, the parsed `query` reads `[redacted]`, and a
 * copied cURL command runs (curl reads `[…]` in a URL as a glob range and refuses it).
 */
export const REDACTED_IN_URL = encodeURIComponent(REDACTED);

/*
 * THE REDACTION RULE of kept endpoints, for header names and query parameter names alike.
 *
 * A name is cut into lower-case words: at every character that is not a letter or digit (`-`,
 * `_`, `.`, …) and at camelCase humps (`accessToken`, `APIKey`). It is secret when:
 *   - a word is one of SECRET_WORDS (`X-Auth`, `X-Sig`, `X-Session-Id`), or ends in one of
 *     SECRET_ENDINGS (`Token`, `X-Custom-Token`, `hub.verify_token`, `csrftoken`, `X-Password`,
 *     `Authorization`, `X-Authentication`, `Cookie`, `X-Amz-Credential`);
 *   - `key` follows one of KEY_KINDS, as its own word or run together (`X-Api-Key`, `Api_Key`,
 *     `Apikey`, `X-Secret-Key`, `X-Access-Key`, `Ocp-Apim-Subscription-Key`, `X-Functions-Key`);
 *     a `key` of any other kind is no secret (`Idempotency-Key`, `Sec-WebSocket-Key`, `X-Key-Id`);
 *   - the name holds `signature` or `hmac` anywhere (`X-Hub-Signature-256`, `X-Shopify-Hmac-Sha256`;
 *     the page relies on this to say why a kept endpoint cannot check signatures);
 *   - the whole name is one of SECRET_ALONE: `key` (Google API keys), `code` (Azure Functions'
 *     function key), `sign`, `pass` (words too common to match inside longer names: `status_code`);
 *   - for headers, the name is in the operator's REDACT_HEADERS.
 * Except NOT_SECRET: Microsoft Graph's `validationToken`, a one-time handshake value the receiver
 * must echo within seconds, worthless afterwards and needed to debug the handshake (as Meta's
 * `hub.challenge`, which no rule matches; Meta's `hub.verify_token` is a standing secret).
 * Words match whole: `monkey`, `keyboard`, `Keep-Alive`, `page`, `event` stay clear.
 * Besides names, the user-info of an absolute-form target (`http://user:pw@host/…`) is always
 * secret (redactTarget).
 */
const SECRET_WORDS = new Set(['auth', 'pwd', 'sig', 'session', 'sessionid', 'jwt']);
const SECRET_ENDINGS = [
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'authorization',
  'authentication',
  'cookie',
];
const KEY_KINDS = [
  'api',
  'access',
  'secret',
  'subscription',
  'functions',
  'function',
  'private',
  'client',
  'master',
  'signing',
  'shared',
  'consumer',
  'auth',
];
const SECRET_ALONE = new Set(['key', 'code', 'sign', 'pass']);
/** Names (words run together) that the rule would match but that carry no standing secret. */
const NOT_SECRET = new Set(['validationtoken']);

/** `X-Hub-Signature-256` -> x hub signature 256; `hub.verify_token` -> hub verify token; `APIKey` -> api key. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

/** True for a header or query parameter name whose value a kept endpoint must not store (the rule above). */
export function isSecretName(name: string): boolean {
  const words = wordsOf(name);
  const joined = words.join('');
  if (NOT_SECRET.has(joined)) return false;
  if (joined.includes('signature') || joined.includes('hmac')) return true;
  if (words.length === 1 && SECRET_ALONE.has(joined)) return true;
  return words.some(
    (word, i) =>
      SECRET_WORDS.has(word) ||
      SECRET_ENDINGS.some((ending) => word.endsWith(ending)) ||
      KEY_KINDS.some((kind) => word.endsWith(`${kind}key`) || (word === 'key' && words[i - 1] === kind)),
  );
}

/** True for a header whose value a kept endpoint must not store: the rule above, and the operator's own list (REDACT_HEADERS, lower case). */
export function isSecretHeader(lowerName: string, extra: ReadonlySet<string>): boolean {
  return extra.has(lowerName) || isSecretName(lowerName);
}

/**
 * Replaces secret values by `[redacted]`, keeping every name and the order. Returns the names
 * redacted (as received, once each), which the record lists.
 */
export function redactHeaders(headers: Array<[string, string]>, extra: ReadonlySet<string>): string[] {
  const redacted: string[] = [];
  for (const pair of headers) {
    if (!isSecretHeader(pair[0].toLowerCase(), extra)) continue;
    pair[1] = REDACTED;
    if (!redacted.includes(pair[0])) redacted.push(pair[0]);
  }
  return redacted;
}

/**
 * The raw request target with its secrets replaced by REDACTED_IN_URL, every other byte as sent:
 * the user-info of an absolute-form target (`http://user:pw@host/…` -> `http://%5Bredacted%5D@host/…`),
 * and each non-empty value of a query parameter with a secret name (judged decoded, as `query`
 * shows it: `api%5Fkey` is `api_key`). An empty value stays empty: nothing to hide, and worth
 * seeing. Returns the query names redacted (decoded, once each, in order), which the record lists.
 */
export function redactTarget(url: string): { url: string; queryNames: string[] } {
  let target = url;
  if (target.charCodeAt(0) !== 0x2f /* / */) {
    const slashes = target.indexOf('//');
    const query = target.indexOf('?');
    if (slashes !== -1 && (query === -1 || slashes < query)) {
      const authorityStart = slashes + 2;
      let authorityEnd = target.slice(authorityStart).search(/[/?#]/);
      authorityEnd = authorityEnd === -1 ? target.length : authorityStart + authorityEnd;
      const at = target.lastIndexOf('@', authorityEnd - 1);
      if (at >= authorityStart) target = target.slice(0, authorityStart) + REDACTED_IN_URL + target.slice(at);
    }
  }

  const queryNames: string[] = [];
  const queryStart = target.indexOf('?');
  if (queryStart === -1) return { url: target, queryNames };
  const pieces = target.slice(queryStart + 1).split('&');
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] as string;
    const equals = piece.indexOf('=');
    if (equals === -1 || equals === piece.length - 1) continue;
    const rawName = piece.slice(0, equals);
    // Decoded as URLSearchParams decodes it (`+` is a space, a bad escape stays as is).
    const name = /[%+]/.test(rawName) ? ([...new URLSearchParams(`${rawName}=`).keys()][0] ?? rawName) : rawName;
    if (!isSecretName(name)) continue;
    pieces[i] = `${rawName}=${REDACTED_IN_URL}`;
    if (!queryNames.includes(name)) queryNames.push(name);
  }
  if (queryNames.length > 0) target = `${target.slice(0, queryStart + 1)}${pieces.join('&')}`;
  return { url: target, queryNames };
}
