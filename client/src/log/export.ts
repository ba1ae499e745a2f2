import { replayUrl } from '../../../src/shared/to-curl.js';
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';

/** Reason phrases for the statuses an answer can have (RFC 9110 and friends). */
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

/** The stored body as text when its bytes are UTF-8 (a base64 body can be: control characters are stored so); else undefined. */
function bodyText(request: CapturedRequest): string | undefined {
  if (request.bodyEncoding === 'utf8') return request.body;
  const binary = atob(request.body);
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * HAR 1.2's postData: `mimeType` and `text`. A body that is not UTF-8 keeps its bytes as base64 in
 * `text`, marked by the custom field `_encoding` (HAR allows fields starting with `_`) and a comment.
 */
function postData(request: CapturedRequest): Record<string, string> | undefined {
  if (request.storedSize === 0) return undefined;
  const mimeType = request.contentType ?? '';
  const text = bodyText(request);
  if (text !== undefined) return { mimeType, text };
  return {
    mimeType,
    text: request.body,
    _encoding: 'base64',
    comment: 'Binary body (not UTF-8): text holds its bytes as base64.',
  };
}

/**
 * The log as HAR 1.2. Hookwatch answers senders itself: each entry's response carries the status
 * the sender got and how long it waited; the record does not hold the answer's headers or body,
 * so the response says so (sizes of -1, "unknown").
 */
export function toHar(requests: readonly CapturedRequest[], receiverUrl: string): string {
  const entries = requests.map((request) => {
    const queryString = Object.entries(request.query).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: v })),
    );
    const data = postData(request);
    const status = request.answer?.status ?? 0;
    const wait = request.answer?.delayMs ?? 0;
    return {
      startedDateTime: request.receivedAt,
      time: wait,
      request: {
        method: request.method,
        url: replayUrl(request, receiverUrl),
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: request.headers.map(([name, value]) => ({ name, value })),
        queryString,
        ...(data ? { postData: data } : {}),
        headersSize: -1,
        bodySize: request.size,
        ...(request.truncated
          ? { comment: `Body truncated: ${request.storedSize} of ${request.size} bytes kept.` }
          : {}),
      },
      response: {
        status,
        statusText: STATUS_TEXT[status] ?? '',
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: [],
        content: {
          size: -1,
          mimeType: 'x-unknown',
          comment: 'Hookwatch records the status and delay of its answer, not its headers or body.',
        },
        redirectURL: '',
        headersSize: -1,
        bodySize: -1,
      },
      cache: {},
      timings: { send: 0, wait, receive: 0 },
      ...(request.remoteAddress ? { _remoteAddress: request.remoteAddress } : {}),
    };
  });
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'Hookwatch', version: '1' }, entries } }, null, 2);
}
