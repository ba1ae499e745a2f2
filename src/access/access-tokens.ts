import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * One access token as the server holds it: the user it signs in, and the SHA-256 of the token
 * (the token itself is never held past parsing, so no log or dump of the config can show it).
 */
export interface AccessToken {
  user: string;
  hash: Buffer;
}

/** What a token may be made of: long enough not to be guessed, and free of the list's separators. */
const TOKEN = /^[A-Za-z0-9._~+/=-]{16,512}$/;
/** A token's optional name (`alice:…`), shown in logs as the user. */
const NAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** Entries in one list or file, so a huge file cannot make every check slow. */
export const MAX_ACCESS_TOKENS = 10_000;

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * `name:token` or `token` entries, separated by commas or new lines (`#` starts a comment line):
 * the tokens (none for an empty list: every token withdrawn), or a problem naming the entry by its place (never by its text, which is a secret).
 * An unnamed token's user is `token-` and the first 16 hex digits of its hash: stable, and no secret.
 */
export function parseAccessTokens(text: string): AccessToken[] | string {
  const entries = text
    .split(/\r?\n/)
    .filter((line) => !line.trimStart().startsWith('#'))
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length > MAX_ACCESS_TOKENS) return `more than ${MAX_ACCESS_TOKENS} tokens`;
  const tokens: AccessToken[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const name = colon === -1 ? undefined : entry.slice(0, colon);
    const token = colon === -1 ? entry : entry.slice(colon + 1);
    if (name !== undefined && !NAME.test(name)) return `entry ${index + 1}: a name is 1-64 of A-Z a-z 0-9 . _ @ -`;
    if (!TOKEN.test(token)) return `entry ${index + 1}: a token is 16-512 of A-Z a-z 0-9 . _ ~ + / = -`;
    const hash = hashToken(token);
    tokens.push({ user: name ?? `token-${hash.toString('hex').slice(0, 16)}`, hash });
  }
  return tokens;
}

/**
 * The user `token` signs in, or undefined. Looked up by the token's SHA-256: what an attacker
 * can learn from the lookup's time is about hashes of the guesses they chose, never about a held
 * token, so this is safe where a plain comparison of tokens would not be; and it costs the same
 * with 10,000 tokens as with one (comparing against each took 19 ms a check, enough for unsigned
 * requests to stall the process). The match is confirmed in constant time.
 */
export function userOfToken(tokens: readonly AccessToken[], token: string): string | undefined {
  const hash = hashToken(token);
  const found = indexOf(tokens).get(hash.toString('hex'));
  return found !== undefined && timingSafeEqual(found.hash, hash) ? found.user : undefined;
}

/** Each token list's lookup by hash, built once per list (a reload makes a new list). */
const indexes = new WeakMap<readonly AccessToken[], Map<string, AccessToken>>();
function indexOf(tokens: readonly AccessToken[]): Map<string, AccessToken> {
  let index = indexes.get(tokens);
  if (!index) {
    index = new Map();
    // The first of a repeated token wins, as it did when every token was compared in order.
    for (const token of tokens)
      if (!index.has(token.hash.toString('hex'))) index.set(token.hash.toString('hex'), token);
    indexes.set(tokens, index);
  }
  return index;
}
