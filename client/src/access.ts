// Who may use this instance (ACCESS_MODE, docs/deploy.md#who-may-create-and-watch). In token mode
// the page asks for an access token once and keeps it in this browser (localStorage), sending it
// as X-Hookwatch-Token over HTTP and as `token` in the socket's first message, never in a URL.
import type { AccessAnswer } from '../../src/shared/schemas/endpoints-api.js';

const TOKEN_KEY = 'hookwatch.accessToken';

function readToken(): string | undefined {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Read once: every call and socket of this page uses the same token until it signs in again. */
let token = readToken();

export function accessToken(): string | undefined {
  return token;
}

/** The header a call to the endpoints API carries: none without a token. */
export function tokenHeaders(): Record<string, string> {
  return token === undefined ? {} : { 'x-hookwatch-token': token };
}

/** Signs this page in with `value` and keeps it for the next visit (when localStorage may be written). */
export function keepToken(value: string): void {
  token = value;
  try {
    localStorage.setItem(TOKEN_KEY, value);
  } catch {
    // Kept for this page only.
  }
}

/** Forgets the token here and in this browser. */
export function dropToken(): void {
  token = undefined;
  try {
    localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Nothing was kept.
  }
}

/** How the server decides who may use it, and who `candidate` (else this page's token) signs in; undefined when it cannot be asked. */
export async function askAccess(candidate = token): Promise<AccessAnswer | undefined> {
  try {
    const response = await fetch('/api/access', { cache: 'no-store', headers: candidate === undefined ? {} : { 'x-hookwatch-token': candidate } });
    return response.ok ? ((await response.json()) as AccessAnswer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server refused this page's token (withdrawn since: a socket closed with 4401, or a call
 * answered 401): forget it and start again, which asks for a token anew. A 401 without a token
 * (a sign-in proxy that let a call through without its user) would only be refused again, so
 * the refusal is left to show; a socket's 4401 (`tokenMode`) comes only from a token instance,
 * whose start asks for one, so it starts again even without a token (the page began while the
 * server could not say it needs one).
 */
export function signedOut(tokenMode = false): void {
  if (token === undefined && !tokenMode) return;
  dropToken();
  location.reload();
}
