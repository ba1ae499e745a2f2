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
 * The user `token` signs in, or undefined. Compared in constant time against every token, and
 * every token is always compared, so neither the time taken nor the answer tells an unknown
 * token from one that is nearly right.
 */
export function userOfToken(tokens: readonly AccessToken[], token: string): string | undefined {
  const hash = hashToken(token);
  let user: string | undefined;
  for (const candidate of tokens) {
    if (timingSafeEqual(candidate.hash, hash) && user === undefined) user = candidate.user;
  }
  return user;
}
