import { LIVE_PATH } from '../shared/protocol.js';

/** What a page share link (`http(s)://host[:port]/#<endpointId>.<key>`) holds. */
export interface ShareLink {
  endpointId: string;
  /** The watch key: goes only into the `join` message, never into a URL, a log or the terminal. */
  key: string;
  /** `http(s)://host[:port]`: where the page and the API live. */
  origin: string;
  /** `ws(s)://host[:port]/api/live` */
  liveUrl: string;
}

const ENDPOINT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const WATCH_KEY = /^[A-Za-z0-9]{1,128}$/;

/**
 * Thrown for a link that cannot be used. The message never quotes the input: the input holds
 * the key, and error messages end up in terminals, CI logs and bug reports.
 */
export class ShareLinkError extends Error {}

export function parseShareLink(text: string): ShareLink {
  const url = parseHttpUrl(text, 'the share link');
  const fragment = url.hash.slice(1);
  if (fragment === '')
    throw new ShareLinkError('the share link has no #<endpointId>.<key> part: copy the whole link from the page');
  const dot = fragment.indexOf('.');
  const endpointId = dot === -1 ? fragment : fragment.slice(0, dot);
  const key = dot === -1 ? '' : fragment.slice(dot + 1);
  if (!ENDPOINT_ID.test(endpointId))
    throw new ShareLinkError("the share link's endpoint id is malformed (expected 1-64 of A-Z a-z 0-9 _ -)");
  if (!WATCH_KEY.test(key))
    throw new ShareLinkError(
      "the share link's key is missing or malformed (expected #<endpointId>.<key>, key of 1-128 letters and digits)",
    );
  return { endpointId, key, origin: url.origin, liveUrl: liveUrlFor(url.origin) };
}

/**
 * The server's base URL for `create --server`: only its origin counts, since the live socket and
 * the page are at the root. A path is refused rather than ignored, so nobody is surprised.
 */
export function parseServerBase(text: string, source = '--server'): string {
  const url = parseHttpUrl(text, source);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new ShareLinkError(
      `${source} takes the server's base URL only, e.g. https://hooks.example.com (no path, query or fragment)`,
    );
  }
  return url.origin;
}

export function formatShareLink(origin: string, endpointId: string, key: string): string {
  return `${origin}/#${endpointId}.${key}`;
}

/** `https://host` -> `wss://host/api/live` */
export function liveUrlFor(origin: string): string {
  return `${origin.replace(/^http/, 'ws')}${LIVE_PATH}`;
}

/** Replaces the key of anything that looks like a share link, for text bound for a terminal or log. */
export function redactKeys(text: string): string {
  return text.replace(/#([A-Za-z0-9_-]{1,64})\.[A-Za-z0-9]+/g, '#$1.<key>');
}

function parseHttpUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ShareLinkError(`${what} is not a URL (expected http(s)://host[:port]/…)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ShareLinkError(`${what} must start with http:// or https://`);
  return url;
}
