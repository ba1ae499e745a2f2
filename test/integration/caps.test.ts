import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { LIVE_PATH, SUBPROTOCOL } from '../../src/shared/protocol.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send, sendRaw } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A raw connection from a chosen loopback address, collecting what the server answers. */
function openRaw(
  baseUrl: string,
  localAddress = '127.0.0.1',
): Promise<{ socket: Socket; answer: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, answer: () => answer, closed }));
    socket.once('error', reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('caps on addresses, connections and sockets', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer({ logLevel: 'warn', ...overrides });
    cleanups.push(started.close);
    return started;
  }
  async function endpoint(s: TestServer) {
    const created = await SocketClient.create(s.wsUrl);
    cleanups.push(() => created.client.close());
    return created;
  }

  it('holds the per-endpoint rate limit while the per-address limit is on too', async () => {
    const s = await server({ rateLimitPerEndpoint: 3, rateLimitPerAddress: 1000 });
    const a = await endpoint(s);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await send(a.welcome.endpoint.url, { method: 'POST' })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it("does not count a request refused by its per-address limit against the endpoint's limit", async () => {
    const s = await server({ rateLimitPerEndpoint: 4, rateLimitPerAddress: 2 });
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const postFrom = async (from: string) => {
      const raw = await openRaw(s.baseUrl, from);
      raw.socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      await raw.closed;
      return statusOf(raw.answer());
    };
    const attacker = [];
    for (let i = 0; i < 6; i++) attacker.push(await postFrom('127.0.0.2'));
    expect(attacker).toEqual([200, 200, 429, 429, 429, 429]);
    // Two of the endpoint's four went to the attacker's accepted requests; the rest are the victim's.
    expect([await postFrom('127.0.0.3'), await postFrom('127.0.0.3')]).toEqual([200, 200]);
  });

  it('answers an unknown id with 404 before reading its body, and closes the connection', async () => {
    const s = await server();
    const raw = await openRaw(s.baseUrl);
    // Announces 10 MiB and sends 1 KiB: the answer must not wait for the rest.
    raw.socket.write(
      `POST /api/webhook-tester/no-such-endpoint HTTP/1.1\r\nHost: x\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n${'a'.repeat(1024)}`,
    );
    await raw.closed;
    expect(statusOf(raw.answer())).toBe(404);
    expect(raw.answer()).toContain('"code":"ENDPOINT_NOT_FOUND"');
    expect(raw.answer().toLowerCase()).toContain('connection: close');
  });

  it('refuses a body with 503 AT_CAPACITY and Retry-After when the bodies being read hold the reading budget', async () => {
    const s = await server({ maxReadingBytes: 1024 * 1024, maxBodyBytes: 1024 * 1024, requestTimeoutMs: 10_000 });
    const a = await endpoint(s);
    const path = new URL(a.welcome.endpoint.url).pathname;
    const slow = await openRaw(s.baseUrl);
    cleanups.push(() => void slow.socket.destroy());
    slow.socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`);
    slow.socket.write(Buffer.alloc(900 * 1024, 0x61));
    await expect
      .poll(async () => Number(/hookwatch_reading_bytes (\d+)/.exec((await send(`${s.baseUrl}/metrics`)).text)?.[1]), {
        timeout: 3000,
      })
      .toBe(900 * 1024);
    const refused = await send(a.welcome.endpoint.url, { method: 'POST', body: Buffer.alloc(200 * 1024, 0x62) });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.text).error.code).toBe('AT_CAPACITY');
    slow.socket.destroy();
    await expect
      .poll(async () => (await send(a.welcome.endpoint.url, { method: 'POST', body: 'small' })).status, {
        timeout: 3000,
      })
      .toBe(200);
  });

  it('caps open connections per address with 429 TOO_MANY_CONNECTIONS, and other addresses still get in', async () => {
    const s = await server({ maxConnectionsPerAddress: 4 });
    const held = await Promise.all(Array.from({ length: 4 }, () => openRaw(s.baseUrl, '127.0.0.3')));
    cleanups.push(() => held.forEach((raw) => raw.socket.destroy()));
    const refused = await openRaw(s.baseUrl, '127.0.0.3');
    await refused.closed;
    expect(statusOf(refused.answer())).toBe(429);
    expect(refused.answer()).toContain('"code":"TOO_MANY_CONNECTIONS"');
    expect((await send(`${s.baseUrl}/healthz`)).status).toBe(200);
    held[0]?.socket.destroy();
    await held[0]?.closed;
    await expect
      .poll(async () => {
        const again = await openRaw(s.baseUrl, '127.0.0.3');
        again.socket.end('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        await again.closed;
        return statusOf(again.answer());
      })
      .toBe(200);
    expect(await send(`${s.baseUrl}/metrics`).then((r) => r.text)).toMatch(
      /hookwatch_rejections_total\{reason="too_many_connections"\} [1-9]/,
    );
  });

  it('does not cap connections per address from a proxy TRUST_PROXY trusts', async () => {
    const s = await server({ maxConnectionsPerAddress: 2, trustProxy: ['127.0.0.3'] });
    const held = await Promise.all(Array.from({ length: 5 }, () => openRaw(s.baseUrl, '127.0.0.3')));
    cleanups.push(() => held.forEach((raw) => raw.socket.destroy()));
    const last = held.at(-1);
    last?.socket.end('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await last?.closed;
    expect(statusOf(last?.answer() ?? '')).toBe(200);
  });

  it('closes connections past MAX_CONNECTIONS at once, and counts them', async () => {
    const s = await server({ maxConnections: 16, maxConnectionsPerAddress: 1000 });
    const held = await Promise.all(Array.from({ length: 16 }, () => openRaw(s.baseUrl)));
    cleanups.push(() => held.forEach((raw) => raw.socket.destroy()));
    const dropped = await openRaw(s.baseUrl);
    await dropped.closed;
    expect(dropped.answer()).toBe('');
    held[0]?.socket.destroy();
    await expect
      .poll(async () => (await send(`${s.baseUrl}/metrics`).catch(() => ({ text: '' }))).text, { timeout: 3000 })
      .toMatch(/hookwatch_rejections_total\{reason="too_many_connections"\} [1-9]/);
  });

  it('closes a connection that sends nothing within the headers timeout', async () => {
    const s = await server({ headersTimeoutMs: 1000, requestTimeoutMs: 5000 });
    const raw = await openRaw(s.baseUrl);
    const started = Date.now();
    await raw.closed;
    expect(Date.now() - started).toBeLessThan(3500);
  });

  it('caps open live sockets per address, and so the endpoints one address keeps watched', async () => {
    const s = await server({ maxLiveSocketsPerAddress: 2 });
    const first = await endpoint(s);
    await endpoint(s);
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${s.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL]);
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('open', () => resolve(101));
    });
    expect(status).toBe(429);
    await first.client.close();
    await expect
      .poll(async () => {
        try {
          const again = await SocketClient.create(s.wsUrl);
          cleanups.push(() => again.client.close());
          return true;
        } catch {
          return false;
        }
      })
      .toBe(true);
  });

  it('closes a socket that sends too many messages a second with 4029, and one that sends a run of junk with 1008', async () => {
    const s = await server({ liveMessagesPerSecond: 5 });
    const chatty = await SocketClient.open(s.wsUrl);
    for (let i = 0; i < 30; i++) chatty.send({ type: 'clear' });
    expect(await chatty.closed).toBe(4029);
    expect(chatty.messages.some((m) => m.type === 'error' && m.error.code === 'TOO_MANY_MESSAGES')).toBe(true);

    // At the default rate: ten junk messages would use all of five a second's burst of ten.
    const roomy = await server();
    const junk = await SocketClient.open(roomy.wsUrl);
    for (let i = 0; i < 10; i++) junk.socket.send('not json');
    expect(await junk.closed).toBe(1008);
  });

  it('a join after a seq the endpoint never gave changes nothing: the history stays, and the joiner gets what comes next', async () => {
    const s = await server();
    const a = await endpoint(s);
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'one' });
    // A page (or `tail --from-seq 99`) that claims to hold up to #99: told the real last seq, not refused (it would loop).
    const client = await SocketClient.open(s.wsUrl);
    cleanups.push(() => client.close());
    client.send({ type: 'join', endpointId: a.welcome.endpoint.id, key: a.welcome.endpoint.key, afterSeq: 99 });
    const welcome = await client.next('welcome');
    expect([welcome.lastSeq, welcome.gap, welcome.backlog]).toEqual([1, false, 0]);
    // The numbering goes on where it was, every watcher gets the next request, and #1 is still stored.
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'two' });
    expect((await client.requests(1))[0]?.seq).toBe(2);
    expect((await a.client.requests(2)).map((request) => request.seq)).toEqual([1, 2]);
    const again = await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key);
    cleanups.push(() => again.client.close());
    expect([again.welcome.backlog, again.welcome.gap]).toEqual([2, false]);
    expect(a.client.messages.some((message) => message.type === 'evicted')).toBe(false);
  });

  it('tells watchers when the stored-bytes budget evicts their oldest requests, and counts it', async () => {
    const s = await server({
      maxStoredBytes: 2 * 1024 * 1024,
      maxStoredBytesPerEndpoint: 2 * 1024 * 1024,
      maxBodyBytes: 256 * 1024,
      readLimitBytes: 1024 * 1024,
    });
    const a = await endpoint(s);
    const body = Buffer.alloc(200 * 1024, 0x61);
    for (let i = 0; i < 12; i++)
      expect((await send(a.welcome.endpoint.url, { method: 'POST', body })).status).toBe(200);
    const evicted = await a.client.next('evicted');
    expect(evicted.throughSeq).toBeGreaterThanOrEqual(1);
    expect((await s.store.stats()).storedBytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    const rejoin = await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key);
    cleanups.push(() => rejoin.client.close());
    expect(rejoin.welcome.gap).toBe(true);
    expect(rejoin.welcome.backlog).toBeLessThan(12);
    expect((await send(`${s.baseUrl}/metrics`)).text).toMatch(/hookwatch_evicted_requests_total [1-9]/);
  });
});

describe('every answer in the documented format', () => {
  let s: TestServer;
  let watcher: SocketClient;
  let url: string;
  afterEach(async () => {
    await watcher?.close();
    await s?.close();
  });
  async function setUp() {
    s = await startServer({ logLevel: 'warn' });
    const created = await SocketClient.create(s.wsUrl);
    watcher = created.client;
    url = created.welcome.endpoint.url;
  }

  it('captures a receiver URL the router cannot decode, and answers other undecodable paths in JSON without the URL', async () => {
    await setUp();
    const path = new URL(url).pathname;
    const answer = await sendRaw(s.baseUrl, `GET ${path}/a%zz?q=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(statusOf(answer)).toBe(200);
    expect(answer).toContain('x-hookwatch-response: configured');
    const [captured] = await watcher.requests(1);
    expect(captured?.subPath).toBe('/a%zz');

    const other = await sendRaw(s.baseUrl, 'GET /nothing/%zz-secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(statusOf(other)).toBe(400);
    expect(other).toContain('"code":"BAD_REQUEST"');
    expect(other).not.toContain('secret');
    expect(other).toContain('x-hookwatch-response: error');
  });

  it('captures a request with an unknown Expect instead of a bare 417', async () => {
    await setUp();
    const response = await send(url, { method: 'POST', headers: { expect: '200-ok' }, body: 'x' });
    expect(response.status).toBe(200);
    expect((await watcher.requests(1))[0]?.headers).toContainEqual(['expect', '200-ok']);
  });

  it('answers a plain GET /api/live with 426 UPGRADE_REQUIRED in JSON', async () => {
    await setUp();
    const response = await send(`${s.baseUrl}${LIVE_PATH}`);
    expect(response.status).toBe(426);
    expect(JSON.parse(response.text).error.code).toBe('UPGRADE_REQUIRED');
    expect(response.headers['x-hookwatch-response']).toBe('error');
  });

  it('marks a refused upgrade as our error and closes its connection', async () => {
    await setUp();
    const answer = await sendRaw(
      s.baseUrl,
      `GET ${LIVE_PATH} HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${SUBPROTOCOL}\r\n\r\n`,
      2000,
    );
    expect(statusOf(answer)).toBe(403);
    expect(answer).toContain('x-hookwatch-response: error');
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('reads the sub-path of an absolute-form target', async () => {
    await setUp();
    const { pathname } = new URL(url);
    await sendRaw(
      s.baseUrl,
      `GET http://other.example${pathname}/x/y?z=1 HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n`,
    );
    const [captured] = await watcher.requests(1);
    expect(captured?.subPath).toBe('/x/y');
    expect(captured?.query).toEqual({ z: '1' });
  });

  it("captures every header of a request, past Node's default count of 2,000 lines", async () => {
    await setUp();
    const { pathname } = new URL(url);
    const headers = Array.from({ length: 2503 }, (_, i) => `a${i % 10}: ${i % 10}\r\n`).join('');
    await sendRaw(s.baseUrl, `GET ${pathname} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);
    const [captured] = await watcher.requests(1);
    expect(captured?.headers.length).toBe(2505);
  });
});
