/** What kept endpoints store instead of a secret header's value (product.md item 12). */
export const REDACTED = '[redacted]';

/** Header names (lower case) whose values carry credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'api-key', 'x-auth-token']);
/** Name endings that mark a token or secret. */
const SECRET_SUFFIXES = ['-signature', '-token', '-secret'];

/**
 * True for a header whose value a kept endpoint must not store: the credential headers, every
 * name ending in -signature, -token or -secret, any name with "signature" or "hmac" in it
 * (`X-Hub-Signature-256`, `X-Shopify-Hmac-Sha256`), and the operator's own list (REDACT_HEADERS).
 */
export function isSecretHeader(lowerName: string, extra: ReadonlySet<string>): boolean {
  return (
    SECRET_HEADERS.has(lowerName) ||
    extra.has(lowerName) ||
    SECRET_SUFFIXES.some((suffix) => lowerName.endsWith(suffix)) ||
    lowerName.includes('signature') ||
    lowerName.includes('hmac')
  );
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
