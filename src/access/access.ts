import { readFileSync, statSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { parseAccessTokens, userOfToken, type AccessToken } from './access-tokens.js';

export type AccessMode = Config['access']['accessMode'];

/** The header a client sends its access token in (ACCESS_MODE=token); the watch key keeps `Authorization: Bearer`. */
export const TOKEN_HEADER = 'x-hookwatch-token';
/** The largest ACCESS_TOKENS_FILE read: MAX_ACCESS_TOKENS entries of the longest name and token fit. */
const MAX_TOKENS_FILE_BYTES = 8 * 1024 * 1024;
/** The longest user name believed from the proxy's header: an email address fits many times over. */
const MAX_USER_CHARS = 256;

/** The same words for a missing, an unknown and a wrong token: a caller learns nothing about tokens. */
const NO_TOKEN =
  'this instance needs an access token (send it as X-Hookwatch-Token; the page asks for it, the CLI takes --token or HOOKWATCH_TOKEN)';

/** ACCESS_TOKENS_FILE could not be read or holds a bad entry. */
export class AccessTokensError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccessTokensError';
  }
}

/**
 * Who may create, watch and configure. Receivers never ask it: senders
 * stay public in every mode.
 */
export interface Access {
  readonly mode: AccessMode;
  /**
   * The signed-in user an HTTP request (a call to the endpoints API, a socket handshake) comes
   * from: undefined in open mode; in token mode the user of its X-Hookwatch-Token; in proxy mode
   * the ACCESS_USER_HEADER value, believed only when the request's peer is a TRUST_PROXY address.
   * Throws UNAUTHORIZED otherwise. (A live socket's token comes in its first message instead.)
   */
  userOf(request: {
    headers: IncomingHttpHeaders;
    rawHeaders: string[];
    socket: { remoteAddress?: string | undefined };
  }): string | undefined;
  /** Token mode: the user a token signs in now, or undefined (then refuse with `refusal()`). */
  userOfToken(token: string | undefined): string | undefined;
  /** The error a refused caller gets. */
  refusal(): ReturnType<typeof errors.UNAUTHORIZED>;
  /**
   * Changes each time the tokens are reloaded, so a socket checks its token again only when
   * something changed (a heartbeat of every socket would otherwise compare against every token).
   */
  readonly generation: number;
  /**
   * Reads ACCESS_TOKENS_FILE again (SIGHUP): its tokens, with ACCESS_TOKENS, are the ones that
   * count from now on; the number of tokens. On a bad file it throws AccessTokensError and the
   * tokens stay as they were.
   */
  reload(): number;
}

/** `trustProxy`: the addresses whose user header is believed (TRUST_PROXY). */
export function createAccess(config: Config['access'], trustProxy: Config['server']['trustProxy']): Access {
  const mode = config.accessMode;
  const fixed = config.accessTokens ?? [];
  const readFile = (): AccessToken[] => {
    if (config.accessTokensFile === undefined) return [];
    let text: string;
    try {
      const bytes = statSync(config.accessTokensFile).size;
      if (bytes > MAX_TOKENS_FILE_BYTES)
        throw new AccessTokensError(
          `ACCESS_TOKENS_FILE ${config.accessTokensFile} is larger than ${MAX_TOKENS_FILE_BYTES} bytes`,
        );
      text = readFileSync(config.accessTokensFile, 'utf8');
    } catch (error) {
      if (error instanceof AccessTokensError) throw error;
      throw new AccessTokensError(
        `ACCESS_TOKENS_FILE ${config.accessTokensFile} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
    const parsed = parseAccessTokens(text);
    if (typeof parsed === 'string')
      throw new AccessTokensError(`ACCESS_TOKENS_FILE ${config.accessTokensFile}: ${parsed}`);
    return parsed;
  };
  let tokens: readonly AccessToken[] = mode === 'token' ? [...fixed, ...readFile()] : [];
  let generation = 0;
  if (mode === 'token' && tokens.length === 0)
    throw new AccessTokensError(
      `ACCESS_TOKENS_FILE ${config.accessTokensFile ?? ''} holds no tokens, and ACCESS_TOKENS gives none: nobody could sign in`,
    );
  const trusted = typeof trustProxy === 'boolean' ? () => trustProxy : proxyAddr.compile(trustProxy);
  const refusal = () =>
    errors.UNAUTHORIZED(
      mode === 'proxy' ? 'no signed-in user came with this request from the sign-in proxy' : NO_TOKEN,
    );
  const tokenUser = (token: string | undefined) =>
    token === undefined || token.length > 1024 ? undefined : userOfToken(tokens, token);

  return {
    mode,
    get generation() {
      return generation;
    },
    userOf(request) {
      if (mode === 'open') return undefined;
      if (mode === 'token') {
        const user = tokenUser(single(request.headers[TOKEN_HEADER]));
        if (user === undefined) throw refusal();
        return user;
      }
      const address = request.socket.remoteAddress;
      // Node joins a repeated custom header into one value ("victim@x, me@x"): only a header sent once is believed.
      const user = sentOnce(request.rawHeaders, config.accessUserHeader)
        ? single(request.headers[config.accessUserHeader])?.trim()
        : undefined;
      // The header is believed only from the proxy: anyone else could send it too.
      if (address === undefined || !trusted(address, 0) || !user || user.length > MAX_USER_CHARS || hasControl(user))
        throw refusal();
      return user;
    },
    userOfToken: tokenUser,
    refusal,
    reload() {
      if (mode !== 'token') return 0;
      tokens = [...fixed, ...readFile()];
      generation++;
      return tokens.length;
    },
  };
}

/** Node refuses most control characters in a header value, but not every one (a tab). */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** A header sent twice is not believed: which one would count is the proxy's business, not a guess here. */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Whether the raw request carries the header (`lowerName`) exactly once. */
function sentOnce(rawHeaders: readonly string[], lowerName: string): boolean {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if ((rawHeaders[i] as string).toLowerCase() === lowerName) count++;
  return count === 1;
}
