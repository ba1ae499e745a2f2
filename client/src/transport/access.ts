// Who may use this instance (ACCESS_MODE, docs/deploy.md#who-may-create-and-watch). In token mode
// the page asks for an access token once and keeps it in this browser (localStorage), sending it
// as X-Hookwatch-Token over HTTP and as `token` in the socket's first message, never in a URL.
import { readAccess, type ApiContext } from '../../../src/shared/api-client.js';
import type { AccessAnswer } from '../../../src/shared/schemas/endpoints-api.js';

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

/** How this page calls the endpoints API: on its own origin, with its token, and signed out when the token is refused. */
export function pageApi(): ApiContext {
  return {
    origin: '',
    accessToken: token,
    onStatus: (status) => {
      if (status === 401) signedOut();
    },
  };
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
  const answer = await readAccess({ origin: '', accessToken: candidate });
  return answer.ok ? answer.value : undefined;
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
