import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';

/**
 * A captured request as the receiver records it: a POST of a small JSON body, answered 200.
 * `overrides` sets what a test is about; sizes follow the body unless given.
 */
export function capturedRequest(overrides: Partial<CapturedRequest> = {}): CapturedRequest {
  const body = overrides.body ?? '{"a":"b"}';
  return {
    seq: 1,
    method: 'POST',
    url: '/api/webhook-tester/abc',
    subPath: '',
    query: {},
    headers: [['Content-Type', 'application/json']],
    contentType: 'application/json',
    body,
    bodyEncoding: 'utf8',
    isJson: true,
    form: null,
    parts: null,
    omitted: [],
    answer: { status: 200, delayMs: 0, by: 'default' },
    size: Buffer.byteLength(body),
    storedSize: Buffer.byteLength(body),
    truncated: false,
    remoteAddress: '127.0.0.1',
    receivedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}
