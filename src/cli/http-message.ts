import { isHeaderName, isHeaderValue } from './extra-headers.js';

/** A request as the developer edits it: request line, headers, blank line, body bytes. */
export interface EditableRequest {
  method: string;
  /** The sub-path and query, as under the receiver URL: `/github/push?x=1`. */
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

/** The edited text is not a request we can send; the message says where and why. */
export class HttpMessageError extends Error {}

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;
/** A path and query as sent on a request line: no spaces or control characters. */
const TARGET = /^\/[\x21-\x7e]*$/;
const MAX_HEADERS = 200;

/** `METHOD /path HTTP/1.1`, the headers, a blank line and the body, as a file an editor opens. */
export function formatHttpMessage(request: EditableRequest): Buffer {
  const head = [
    `${request.method} ${request.target} HTTP/1.1`,
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\n');
  return Buffer.concat([Buffer.from(head, 'utf8'), request.body]);
}

/**
 * Reads an edited HTTP message back. Lines may end in LF or CRLF; the body is every byte after
 * the first blank line. Throws HttpMessageError naming the line at fault.
 */
export function parseHttpMessage(bytes: Buffer): EditableRequest {
  const split = findHeadEnd(bytes);
  if (split === undefined)
    throw new HttpMessageError('there is no blank line after the headers (the body starts after one)');
  const lines = bytes.subarray(0, split.headEnd).toString('utf8').split(/\r?\n/);
  const [requestLine = '', ...headerLines] = lines;
  const parts = requestLine.split(' ');
  if (parts.length < 2 || parts.length > 3) throw new HttpMessageError('line 1 should be "METHOD /path HTTP/1.1"');
  const [method = '', target = '', version] = parts;
  if (!METHOD.test(method)) throw new HttpMessageError('line 1: the method is not a valid HTTP method');
  if (!TARGET.test(target))
    throw new HttpMessageError('line 1: the path should start with / and hold no spaces or control characters');
  if (version !== undefined && !/^HTTP\/1\.[01]$/.test(version))
    throw new HttpMessageError('line 1: the version should be HTTP/1.1');
  if (headerLines.length > MAX_HEADERS) throw new HttpMessageError(`more than ${MAX_HEADERS} headers`);
  const headers = headerLines.map((line, index): [string, string] => {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HttpMessageError(`line ${index + 2} should be "Name: value"`);
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!isHeaderName(name))
      throw new HttpMessageError(`line ${index + 2}: the header name is not valid (no spaces before the colon)`);
    if (!isHeaderValue(value))
      throw new HttpMessageError(`line ${index + 2}: the value of ${name} has a control character`);
    return [name, value];
  });
  return { method, target, headers, body: Buffer.from(bytes.subarray(split.bodyStart)) };
}

function findHeadEnd(bytes: Buffer): { headEnd: number; bodyStart: number } | undefined {
  const lf = bytes.indexOf('\n\n');
  const crlf = bytes.indexOf('\r\n\r\n');
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { headEnd: crlf, bodyStart: crlf + 4 };
  if (lf !== -1) return { headEnd: bytes[lf - 1] === 0x0d ? lf - 1 : lf, bodyStart: lf + 2 };
  return undefined;
}
