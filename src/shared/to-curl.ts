import type { CapturedRequest } from './captured-request.js';

/**
 * Headers curl computes itself (or that belong to the old connection); copying them would make
 * the replay lie about its own length or target.
 */
const SKIPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** Headers curl adds on its own; when the original had none, `-H 'Name:'` stops curl sending one. */
const CURL_DEFAULT_HEADERS = ['User-Agent', 'Accept'];

/** Quotes one argument for a POSIX shell: everything inside single quotes is literal. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * A curl command that sends the same method, headers (order and duplicates kept) and body
 * bytes to `targetUrl`. Binary bodies, and text that a shell argument cannot hold (NUL),
 * travel as base64 through `base64 -d`, so the replay is byte for byte. Runs in the browser too.
 */
export function toCurl(request: CapturedRequest, targetUrl: string): string {
  const args: string[] = ['curl'];
  if (request.method === 'HEAD') args.push('--head');
  else if (request.method !== 'GET' || request.storedSize > 0) args.push('-X', shellQuote(request.method));
  args.push(shellQuote(targetUrl));

  const present = new Set<string>();
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    present.add(lower);
    if (SKIPPED_HEADERS.has(lower)) continue;
    args.push('-H', shellQuote(`${name}: ${value}`));
  }
  for (const name of CURL_DEFAULT_HEADERS) {
    if (!present.has(name.toLowerCase())) args.push('-H', shellQuote(`${name}:`));
  }

  let prefix = '';
  if (request.storedSize > 0) {
    // curl adds its own Content-Type for a body, and Expect: 100-continue for large ones.
    if (!present.has('content-type')) args.push('-H', shellQuote('Content-Type:'));
    if (!present.has('expect')) args.push('-H', shellQuote('Expect:'));
    if (request.bodyEncoding === 'base64' || request.body.includes('\0')) {
      const base64 = request.bodyEncoding === 'base64' ? request.body : utf8ToBase64(request.body);
      prefix = `printf %s ${shellQuote(base64)} | base64 -d | `;
      args.push('--data-binary', '@-');
    } else {
      args.push('--data-raw', shellQuote(request.body));
    }
  }
  return prefix + args.join(' ');
}

function utf8ToBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The URL a replay should hit: the receiver URL plus the captured sub-path and query. */
export function replayUrl(request: CapturedRequest, receiverUrl: string): string {
  const queryStart = request.url.indexOf('?');
  return receiverUrl + request.subPath + (queryStart === -1 ? '' : request.url.slice(queryStart));
}
