import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send, sendRaw } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

const STORED_CAP = 1024;
const READ_LIMIT = 64 * 1024;

describe('receiver', () => {
  let server: TestServer;
  let watcher: SocketClient;
  let url: string;

  beforeAll(async () => {
    server = await startServer({ maxBodyBytes: STORED_CAP, readLimitBytes: READ_LIMIT, requestsPerEndpoint: 50 });
    const created = await SocketClient.create(server.wsUrl);
    watcher = created.client;
    url = created.welcome.endpoint.url;
  });
  afterAll(async () => {
    await watcher.close();
    await server.close();
  });

  it('gives the receiver URL on the server it was asked from', () => {
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/api/webhook-tester/[A-Za-z0-9_-]{21}$`));
  });

  it.each(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'PURGE', 'QUERY'])(
    'captures %s',
    async (method) => {
      const response = await send(`${url}/m`, { method });
      expect(response.status).toBe(200);
      const [request] = await watcher.requests(1);
      expect(request?.method).toBe(method);
      expect(request?.subPath).toBe('/m');
    },
  );

  it('answers HEAD with the configured status and no body', async () => {
    const response = await send(url, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(0);
    await watcher.requests(1);
  });

  it('keeps headers in order, with their case and duplicates', async () => {
    const id = url.split('/').pop();
    const raw =
      `POST /api/webhook-tester/${id}/hook HTTP/1.1\r\nHost: example.test\r\nX-Dup: one\r\nx-MiXeD-Case: v\r\n` +
      'X-Dup: two\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello';
    const answer = await sendRaw(server.baseUrl, raw);
    expect(answer).toMatch(/^HTTP\/1.1 200/);
    const [request] = await watcher.requests(1);
    expect(request?.headers).toEqual([
      ['Host', 'example.test'],
      ['X-Dup', 'one'],
      ['x-MiXeD-Case', 'v'],
      ['X-Dup', 'two'],
      ['Content-Type', 'text/plain'],
      ['Content-Length', '5'],
      ['Connection', 'close'],
    ]);
    expect(request?.body).toBe('hello');
    expect(request?.contentType).toBe('text/plain');
  });

  it('parses the query, repeated names as lists, and keeps the raw URL', async () => {
    await send(`${url}/github/push?a=1&b=x%20y&a=2&empty=&__proto__=p`);
    const [request] = await watcher.requests(1);
    expect(request?.url).toMatch(/\/github\/push\?a=1&b=x%20y&a=2&empty=&__proto__=p$/);
    expect(request?.subPath).toBe('/github/push');
    expect({ ...request?.query }).toEqual({ a: ['1', '2'], b: 'x y', empty: '', ['__proto__']: 'p' });
  });

  it('flags a JSON body whatever its content type', async () => {
    await send(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"event":"push","n":[1,2]}' });
    const [request] = await watcher.requests(1);
    expect(request?.isJson).toBe(true);
    expect(JSON.parse(request?.body ?? '')).toEqual({ event: 'push', n: [1, 2] });
    expect(request?.bodyEncoding).toBe('utf8');
  });

  it('does not flag a non-JSON text body', async () => {
    await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    const [request] = await watcher.requests(1);
    expect(request?.isJson).toBe(false);
    expect(request?.body).toBe('{not json');
  });

  it('parses url-encoded form fields', async () => {
    await send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: 'a=1&b=%C3%A9&a=3',
    });
    const [request] = await watcher.requests(1);
    expect({ ...request?.form }).toEqual({ a: ['1', '3'], b: 'é' });
  });

  it('stores invalid UTF-8 and binary bodies as base64, byte for byte', async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x01, 0xc3, 0x28, 0x80]);
    await send(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
    const [request] = await watcher.requests(1);
    expect(request?.bodyEncoding).toBe('base64');
    expect(Buffer.from(request?.body ?? '', 'base64').equals(bytes)).toBe(true);
    expect(request?.size).toBe(bytes.length);
    expect(request?.isJson).toBe(false);
  });

  it('captures an empty body', async () => {
    await send(url, { method: 'POST' });
    const [request] = await watcher.requests(1);
    expect(request).toMatchObject({ body: '', size: 0, storedSize: 0, truncated: false, isJson: false, form: null });
  });

  it('captures a body sent with GET', async () => {
    await send(url, { method: 'GET', headers: { 'content-type': 'application/json' }, body: '{"on":"get"}' });
    const [request] = await watcher.requests(1);
    expect(request).toMatchObject({ method: 'GET', body: '{"on":"get"}', isJson: true });
  });

  it('records sender address and UTC time with milliseconds', async () => {
    const before = Date.now();
    await send(url, { method: 'POST', body: 'x' });
    const [request] = await watcher.requests(1);
    expect(request?.remoteAddress).toMatch(/127\.0\.0\.1$/);
    expect(request?.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(request?.receivedAt ?? '')).toBeGreaterThanOrEqual(before - 1);
  });

  it('truncates at the stored cap, counts the whole size, and still answers as configured', async () => {
    const body = 'a'.repeat(STORED_CAP * 3);
    const response = await send(url, { method: 'POST', body });
    expect(response.status).toBe(200);
    const [request] = await watcher.requests(1);
    expect(request).toMatchObject({
      truncated: true,
      size: STORED_CAP * 3,
      storedSize: STORED_CAP,
      bodyEncoding: 'utf8',
      isJson: false,
    });
    expect(request?.body).toBe('a'.repeat(STORED_CAP));
  });

  it('keeps a truncated text body as text when the cut splits a character', async () => {
    const body = 'a'.repeat(STORED_CAP - 1) + 'é'.repeat(10);
    await send(url, { method: 'POST', body });
    const [request] = await watcher.requests(1);
    expect(request?.bodyEncoding).toBe('utf8');
    expect(request?.body).toBe('a'.repeat(STORED_CAP - 1));
  });

  it('answers 413 past the read limit and still captures the request, truncated', async () => {
    const response = await send(url, { method: 'POST', body: Buffer.alloc(READ_LIMIT * 4, 0x61) }).catch(
      (error: Error) => error,
    );
    if (!(response instanceof Error)) {
      expect(response.status).toBe(413);
      expect(JSON.parse(response.text)).toEqual({
        error: { code: 'BODY_TOO_LARGE', message: expect.stringContaining(String(READ_LIMIT)) },
      });
      expect(response.headers['x-hookwatch-response']).toBe('error');
    }
    const [request] = await watcher.requests(1);
    expect(request?.truncated).toBe(true);
    expect(request?.storedSize).toBe(STORED_CAP);
    expect(request?.size).toBeGreaterThan(READ_LIMIT);
  });

  it('answers 413 with the JSON error when the sender waits for it', async () => {
    const id = url.split('/').pop();
    const head = `POST /api/webhook-tester/${id} HTTP/1.1\r\nHost: x\r\nContent-Length: ${READ_LIMIT * 2}\r\n\r\n`;
    const answer = await sendRaw(
      server.baseUrl,
      Buffer.concat([Buffer.from(head), Buffer.alloc(READ_LIMIT + 10, 0x62)]),
    );
    expect(answer).toMatch(/^HTTP\/1.1 413/);
    expect(answer).toContain('"code":"BODY_TOO_LARGE"');
    expect(answer.toLowerCase()).toContain('connection: close');
    await watcher.requests(1);
  });

  it('sets the safety and CORS headers on every answer', async () => {
    const response = await send(url, { method: 'POST', body: '<script>alert(1)</script>' });
    expect(response.headers).toMatchObject({
      'content-security-policy': "sandbox; default-src 'none'",
      'x-content-type-options': 'nosniff',
      'access-control-allow-origin': '*',
      'x-hookwatch-response': 'configured',
    });
    await watcher.requests(1);
  });

  it('answers a CORS preflight so browser senders can send, and captures it', async () => {
    const response = await send(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-custom',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-methods']).toBe('PUT');
    expect(response.headers['access-control-allow-headers']).toBe('x-custom');
    const [request] = await watcher.requests(1);
    expect(request?.method).toBe('OPTIONS');
  });

  it('captures a malformed Content-Type instead of refusing it', async () => {
    const response = await send(url, { method: 'POST', headers: { 'content-type': '%%%;;;' }, body: 'odd' });
    expect(response.status).toBe(200);
    const [request] = await watcher.requests(1);
    expect(request).toMatchObject({ contentType: '%%%;;;', body: 'odd' });
  });

  it('answers 404 with the JSON error for an unknown id', async () => {
    const response = await send(`${server.baseUrl}/api/webhook-tester/nope-not-an-endpoint/x?y=1`, {
      method: 'POST',
      body: 'x',
    });
    expect(response.status).toBe(404);
    expect(JSON.parse(response.text)).toEqual({ error: { code: 'ENDPOINT_NOT_FOUND', message: expect.any(String) } });
    expect(response.headers['x-hookwatch-response']).toBe('error');
    expect(response.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
  });

  it('answers 404 with the JSON error for an unknown route', async () => {
    const response = await send(`${server.baseUrl}/nothing/here`);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.text).error.code).toBe('NOT_FOUND');
  });
});

describe('receiver log limit', () => {
  it('keeps only the most recent requests', async () => {
    const server = await startServer({ requestsPerEndpoint: 50 });
    try {
      const { client, welcome } = await SocketClient.create(server.wsUrl);
      for (let i = 1; i <= 55; i++) await send(`${welcome.endpoint.url}?i=${i}`, { method: 'POST' });
      await client.requests(55);
      const { client: late, welcome: lateWelcome } = await SocketClient.join(
        server.wsUrl,
        welcome.endpoint.id,
        welcome.endpoint.key,
      );
      expect(lateWelcome.backlog).toBe(50);
      expect(lateWelcome.gap).toBe(true);
      const backlog = await late.requests(50);
      expect(backlog.map((request) => request.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 6));
      expect(backlog[0]?.query).toEqual({ i: '6' });
      await Promise.all([client.close(), late.close()]);
    } finally {
      await server.close();
    }
  });
});
