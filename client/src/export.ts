import type { CapturedRequest } from '../../src/capture/captured-request.js';
import { replayUrl } from '../../src/capture/to-curl.js';

/** The log as HAR 1.2 (requests only: Hookwatch answers senders itself, so responses are the configured one). */
export function toHar(requests: CapturedRequest[], receiverUrl: string): string {
  const entries = requests.map((request) => {
    const queryString = Object.entries(request.query).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: v })));
    return {
      startedDateTime: request.receivedAt,
      time: 0,
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
      response: { status: 0, statusText: '', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: '' }, redirectURL: '', headersSize: -1, bodySize: -1 },
      cache: {},
      timings: { send: 0, wait: 0, receive: 0 },
    };
  });
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'Hookwatch', version: '1' }, entries } }, null, 2);
}
