import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { LIVE_PATH, SUBPROTOCOL } from '../../src/shared/protocol.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send, sendRaw } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('limits', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function server(overrides: Parameters<typeof startServer>[0]): Promise<TestServer> {
    const started = await startServer(overrides);
    cleanups.push(started.close);
    return started;
  }
  async function endpoint(s: TestServer) {
    const created = await SocketClient.create(s.wsUrl);
    cleanups.push(() => created.client.close());
    return created;
  }

  it('rate-limits one receiver URL with 429, Retry-After and the JSON error, and keeps the endpoint working', async () => {
    const s = await server({ rateLimitPerEndpoint: 3, rateLimitPerAddress: 0, rateLimitWindowMs: 60_000 });
    const a = await endpoint(s);
    const b = await endpoint(s);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await send(a.welcome.endpoint.url, { method: 'POST', body: `${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await send(a.welcome.endpoint.url, { method: 'POST' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-hookwatch-response']).toBe('error');
    expect(JSON.parse(limited.text).error).toEqual({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('at most 3 per 60 s'),
    });
    // Limited requests are not captured; the watcher saw exactly the three accepted ones.
    expect((await a.client.requests(3)).map((r) => r.body)).toEqual(['0', '1', '2']);
    await expect(a.client.next('request', 200)).rejects.toThrow();
    // Another endpoint is not affected.
    expect((await send(b.welcome.endpoint.url, { method: 'POST' })).status).toBe(200);
  });

  it('rate-limits one client address across endpoints', async () => {
    const s = await server({ rateLimitPerAddress: 2, rateLimitPerEndpoint: 0 });
    const a = await endpoint(s);
    const b = await endpoint(s);
    expect((await send(a.welcome.endpoint.url)).status).toBe(200);
    expect((await send(b.welcome.endpoint.url)).status).toBe(200);
    expect((await send(a.welcome.endpoint.url)).status).toBe(429);
    expect((await send(b.welcome.endpoint.url)).status).toBe(429);
    // The page, health and the live socket are not receiver traffic.
    expect((await send(`${s.baseUrl}/healthz`)).status).toBe(200);
  });

  it('limits live sockets per address, which bounds endpoint creation', async () => {
    const s = await server({ liveConnectsPerAddress: 2 });
    await endpoint(s);
    await endpoint(s);
    const refused = new WebSocket(`${s.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL]);
    const status = await new Promise<number>((resolve) =>
      refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(429);
  });

  it('answers 431 with the JSON error when the headers are too large', async () => {
    const s = await server({ maxHeaderBytes: 2048 });
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const answer = await sendRaw(s.baseUrl, `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1.1 431/);
    expect(answer).toContain('"code":"HEADERS_TOO_LARGE"');
    expect((await send(a.welcome.endpoint.url)).status).toBe(200);
  });

  it('answers 400 with the JSON error for broken framing', async () => {
    const s = await server({});
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const answer = await sendRaw(
      s.baseUrl,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 400/);
    expect(answer).toContain('"code":"BAD_REQUEST"');
  });

  it('answers CONNECT with the JSON error instead of closing without a word', async () => {
    const s = await server({});
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const answer = await sendRaw(s.baseUrl, `CONNECT ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1.1 400 /);
    expect(answer).toContain('"code":"BAD_REQUEST"');
    expect(answer).toContain('CONNECT is not supported');

    // Node hands a CONNECT socket over, with none of its timeouts and no error handler: a client
    // that keeps its side open must still be cut, and one that resets must not crash the server.
    const { port } = new URL(s.baseUrl);
    const serverSide = new Promise<Duplex>((resolve) =>
      s.app.server.once('connect', (_request, socket: Duplex) => resolve(socket)),
    );
    const lingering = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    cleanups.push(async () => void lingering.destroy());
    lingering.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    await new Promise((resolve) => lingering.resume().once('end', resolve));
    // Our side stays open; the server's closes all the same.
    const socket = await serverSide;
    if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
    const resetting = connect(Number(port), '127.0.0.1');
    resetting.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nxxxxxxxxxx', () =>
      resetting.resetAndDestroy(),
    );
    await new Promise((resolve) => resetting.once('close', resolve));
    expect((await send(`${s.baseUrl}/healthz`)).status).toBe(200);
  });

  it('answers the requests before broken bytes on one connection first, then 400', async () => {
    const s = await server({});
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    // Two whole requests and then garbage, in one write: the parser fails while the captures
    // are still being stored, and their answers must not be lost to the 400.
    const request = (sub: string) => `POST ${path}/${sub} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nA`;
    const answer = await sendRaw(s.baseUrl, `${request('one')}${request('two')}GARBAGE\r\n\r\n`);
    expect(answer.match(/HTTP\/1.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 400']);
    expect(answer).toContain('"code":"BAD_REQUEST"');
    expect((await a.client.requests(2)).map((r) => [r.subPath, r.answer.status])).toEqual([
      ['/one', 200],
      ['/two', 200],
    ]);
  });

  it('answers 408 to a sender that trickles its body past the request timeout', async () => {
    const s = await server({ requestTimeoutMs: 1000 });
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const { connect } = await import('node:net');
    const socket = connect(Number(new URL(s.baseUrl).port), '127.0.0.1');
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab`);
    const trickle = setInterval(() => socket.write('c'), 200);
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => undefined);
    });
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
  });

  it('closes a socket that sends a frame over the message size limit (1009), keeping the endpoint', async () => {
    const s = await server({});
    const a = await endpoint(s);
    const other = await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key);
    other.client.socket.send('x'.repeat(1600 * 1024));
    expect(await other.client.closed).toBe(1009);
    expect((await send(a.welcome.endpoint.url, { method: 'POST', body: 'ok' })).status).toBe(200);
    expect((await a.client.requests(1))[0]?.body).toBe('ok');
  });

  it('refuses live sockets from a foreign browser origin with 403, and allows its own and configured ones', async () => {
    const s = await server({ allowedOrigins: ['https://ops.example'] });
    const statusFor = (origin: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(`${s.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL], { origin });
        socket.on('open', () => {
          socket.close();
          resolve(101);
        });
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      });
    expect(await statusFor('https://evil.example')).toBe(403);
    expect(await statusFor(s.baseUrl)).toBe(101);
    expect(await statusFor('https://ops.example')).toBe(101);
  });
});

describe('metrics', () => {
  it('counts endpoints, watchers, captures, bytes, truncations and rejections', async () => {
    const s = await startServer({ maxBodyBytes: 10 });
    try {
      const { client, welcome } = await SocketClient.create(s.wsUrl);
      await send(welcome.endpoint.url, { method: 'POST', body: 'x'.repeat(25) });
      await send(`${s.baseUrl}/api/webhook-tester/unknown-id`);
      await client.requests(1);
      const metrics = (await send(`${s.baseUrl}/metrics`)).text;
      expect(metrics).toMatch(/^hookwatch_endpoints 1$/m);
      expect(metrics).toMatch(/^hookwatch_watchers 1$/m);
      expect(metrics).toMatch(/^hookwatch_captured_requests_total 1$/m);
      expect(metrics).toMatch(/^hookwatch_captured_bytes_total 25$/m);
      expect(metrics).toMatch(/^hookwatch_truncated_requests_total 1$/m);
      expect(metrics).toMatch(/^hookwatch_rejections_total\{reason="endpoint_not_found"\} 1$/m);
      expect(metrics).toMatch(/^hookwatch_delivery_lag_seconds_count 1$/m);
      expect(s.logs()).not.toContain('/metrics');
      await client.close();
    } finally {
      await s.close();
    }
  });
});
