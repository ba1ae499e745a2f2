import { isIP } from 'node:net';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';

/** Where `forward --to` sends: the URL split into what node:http needs. */
export interface ForwardTarget {
  protocol: 'http:' | 'https:';
  /** For the connection: brackets stripped from an IPv6 literal. */
  hostname: string;
  port: number;
  /** The Host header value: host, and port when not the scheme's default. */
  host: string;
  /** Path prefix for every request, e.g. `/hook` or `/`. */
  basePath: string;
  /** `--to`'s own query without `?`, "" when none; it goes before the captured query. */
  baseQuery: string;
}

export class TargetError extends Error {}

export function parseTarget(text: string): ForwardTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetError('--to is not a URL (expected e.g. http://localhost:3000/webhook)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TargetError('--to must start with http:// or https://');
  if (url.hash !== '') throw new TargetError('--to must not have a #fragment');
  if (url.username !== '' || url.password !== '')
    throw new TargetError('--to must not hold credentials; they would not be sent (the captured headers are)');
  return {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    host: url.host,
    basePath: url.pathname,
    baseQuery: url.search.slice(1),
  };
}

/** A request ready for node:http: headers as a flat `[name, value, name, value, …]` array. */
export interface PreparedRequest {
  method: string;
  path: string;
  headers: string[];
  body: Buffer;
}

/** RFC 9110 section 7.6.1: these describe one connection, not the message, so they are not forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Headers a proxy sets to say who the client was, which host and scheme it asked for, or which
 * path it meant. Coming from the sender they are whatever it chose: `X-Forwarded-For: 127.0.0.1`
 * would make the developer's app, which trusts its own loopback, take the request for a local
 * one. So the sender's values are dropped, and one X-Forwarded-For names the address the server
 * saw (any other `X-Forwarded-*` name goes too, see isForwardingHeader).
 */
const FORWARDING = new Set([
  'forwarded',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-cluster-client-ip',
  'client-ip',
  'x-original-forwarded-for',
  'x-original-url',
  'x-rewrite-url',
]);

/**
 * Methods node:http sends without chunked framing when no length is given. For any other method
 * it would add `Transfer-Encoding: chunked`, so an empty body gets `Content-Length: 0` instead.
 */
const UNFRAMED_BY_DEFAULT = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * The captured request as it should reach the target: same method, the target's path plus the
 * captured sub-path and raw query, every header pair in order with its case and duplicates
 * (Host rewritten in place, hop-by-hop and the sender's forwarding ones dropped, Content-Length
 * made exact, one X-Forwarded-For with the sender's address added last) and the same body
 * bytes. Pure. Throws PathRefusal when the sub-path would leave `--to`'s path.
 */
export function prepareForward(request: CapturedRequest, target: ForwardTarget): PreparedRequest {
  const body = Buffer.from(request.body, request.bodyEncoding === 'base64' ? 'base64' : 'utf8');
  const headers: string[] = [];
  const dropped = droppedHeaderNames(request.headers);
  let sawHost = false;
  let sawLength = false;
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (lower === 'host') {
      // A second Host would make the target reject the request (RFC 9112 section 3.2).
      if (!sawHost) headers.push(name, target.host);
      sawHost = true;
    } else if (lower === 'content-length') {
      // The exact length of what is sent: the stored body may be cut short (truncated), and a
      // repeated Content-Length is refused by strict parsers.
      if (!sawLength) headers.push(name, String(body.length));
      sawLength = true;
    } else if (!dropped.has(lower) && !isForwardingHeader(lower)) {
      headers.push(name, value);
    }
  }
  if (!sawHost) headers.unshift('Host', target.host);
  if (!sawLength && (body.length > 0 || !UNFRAMED_BY_DEFAULT.has(request.method)))
    headers.push('Content-Length', String(body.length));
  // Only an IP address: the record comes from the server, and a header value must not carry
  // anything else (an empty or odd one is left out rather than sent).
  if (isIP(request.remoteAddress) !== 0) headers.push('X-Forwarded-For', request.remoteAddress);
  return { method: request.method, path: targetPath(request, target), headers, body };
}

/** A header that says who or where the request came through (lower-case name). */
function isForwardingHeader(lower: string): boolean {
  return FORWARDING.has(lower) || lower.startsWith('x-forwarded-');
}

/** Hop-by-hop names plus any a Connection header lists; never Host or Content-Length, which framing needs. */
function droppedHeaderNames(headers: ReadonlyArray<readonly [string, string]>): Set<string> {
  const dropped = new Set(HOP_BY_HOP);
  for (const [name, value] of headers) {
    if (name.toLowerCase() !== 'connection') continue;
    for (const token of value.split(',')) {
      const lower = token.trim().toLowerCase();
      if (lower !== '' && lower !== 'host' && lower !== 'content-length') dropped.add(lower);
    }
  }
  return dropped;
}

/** A captured request that is not forwarded: its sub-path would leave `--to`'s path. */
export class PathRefusal extends Error {}

/**
 * Where a server may split a path: `/`, and `\` (WHATWG URL parsing and some servers read it
 * as `/`), plain or percent-encoded, once or more (`%2F`, `%252F`: an app or framework that
 * decodes before it resolves turns `..%2F` into `../`).
 */
const SEPARATOR = /\/|\\|%(?:25)*(?:2f|5c)/i;
/** A `.` percent-encoded once or more: `%2e`, `%2E`, `%252e`. */
const ENCODED_DOT = /%(?:25)*2e/gi;

/**
 * True when a segment of `subPath` is `.` or `..`, read as generously as any server might:
 * split at every separator above, each `%2e` taken as `.`, and anything from `;` on left off
 * (Tomcat and Spring resolve `/..;x/` as `/../`). Such a sub-path, resolved by the target,
 * would climb out of `--to`'s path (`/hook/../admin` is `/admin`). Pure.
 */
export function hasDotSegment(subPath: string): boolean {
  return subPath.split(SEPARATOR).some((segment) => {
    const name = segment.replace(ENCODED_DOT, '.').split(';', 1)[0];
    return name === '.' || name === '..';
  });
}

/**
 * `--to` path, then the captured sub-path (one slash where they meet), then the raw query byte
 * for byte. Throws PathRefusal for a sub-path with a dot-segment: the sender must not steer the
 * request outside `--to`'s path into the rest of the developer's app.
 */
export function targetPath(
  request: Pick<CapturedRequest, 'url' | 'subPath'>,
  target: Pick<ForwardTarget, 'basePath' | 'baseQuery'>,
): string {
  if (hasDotSegment(request.subPath))
    throw new PathRefusal(`the path ${request.subPath} has a dot-segment and would leave --to's path`);
  const base =
    target.basePath.endsWith('/') && request.subPath.startsWith('/') ? target.basePath.slice(0, -1) : target.basePath;
  const queryStart = request.url.indexOf('?');
  const query = queryStart === -1 ? undefined : request.url.slice(queryStart + 1);
  let search = '';
  if (target.baseQuery !== '' && query !== undefined) search = `?${target.baseQuery}&${query}`;
  else if (target.baseQuery !== '') search = `?${target.baseQuery}`;
  else if (query !== undefined) search = `?${query}`;
  return `${base}${request.subPath}${search}`;
}
