import { replayUrl } from '../../src/shared/to-curl.js';
import type { CapturedRequest } from '../../src/shared/captured-request.js';

/**
 * The log as HAR 1.2. Hookwatch answers senders itself: each entry's response carries the status
 * the sender got (0 when the server did not record it) and no content.
 */
export function toHar(requests: readonly CapturedRequest[], receiverUrl: string): string {
  const entries = requests.map((request) => {
    const queryString = Object.entries(request.query).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: v })));
    return {
      startedDateTime: request.receivedAt,
      time: request.answer?.delayMs ?? 0,
      request: {
        method: request.method,
        url: replayUrl(request, receiverUrl),
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: request.headers.map(([name, value]) => ({ name, value })),
        queryString,
        ...(request.storedSize > 0
          ? { postData: { mimeType: request.contentType ?? '', text: request.body, ...(request.bodyEncoding === 'base64' ? { encoding: 'base64' } : {}) } }
          : {}),
        headersSize: -1,
        bodySize: request.size,
        comment: request.truncated ? `body truncated: ${request.storedSize} of ${request.size} bytes kept` : '',
      },
      response: { status: request.answer?.status ?? 0, statusText: '', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: -1 },
      cache: {},
      timings: { send: 0, wait: request.answer?.delayMs ?? 0, receive: 0 },
    };
  });
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'Hookwatch', version: '1' }, entries } }, null, 2);
}
