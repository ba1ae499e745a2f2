import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_PATH, SUBPROTOCOL } from '../../src/shared/protocol.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pool, random, rawExchange, type RawOutcome } from './raw.js';

/** RSS the server (in this process) may grow by over the whole hostile run. */
const RSS_BOUND_BYTES = 150 * 1024 * 1024;
const CONCURRENCY = 50;

describe('hostile input', () => {
  let server: TestServer;
  let watcher: SocketClient;
  let path: string;
  let url: string;
  let port: number;

  beforeAll(async () => {
    server = await startServer({
      logLevel: 'warn',
      rateLimitPerAddress: 0,
      rateLimitPerEndpoint: 0,
      liveConnectsPerAddress: 0,
      maxLiveSocketsPerAddress: 10_000,
      maxConnectionsPerAddress: 10_000,
      liveMessagesPerSecond: 10_000,
      maxBodyBytes: 64 * 1024,
      readLimitBytes: 256 * 1024,
      maxHeaderBytes: 16 * 1024,
      requestTimeoutMs: 1500,
      headersTimeoutMs: 1500,
      requestsPerEndpoint: 50,
    });
    port = Number(new URL(server.baseUrl).port);
    const created = await SocketClient.create(server.wsUrl);
    watcher = created.client;
    url = created.welcome.endpoint.url;
    path = new URL(url).pathname;
  });
  afterAll(async () => {
    await watcher?.close();
    await server?.close();
  });

  it('survives 10,000+ malformed requests and messages, and still captures and delivers', async () => {
    const next = random(20261122);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const bytes = (length: number) => Buffer.from(Array.from({ length }, () => Math.floor(next() * 256)));
    const token = (length: number) =>
      Array.from({ length }, () => String.fromCharCode(33 + Math.floor(next() * 94))).join('');
    const head = (method: string, target: string, headers: string[]) =>
      `${method} ${target} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;

    type Exchange = Parameters<typeof rawExchange>[1];
    const categories: Record<string, () => Exchange> = {
      'invalid method or path': () => [
        `${pick([token(8), 'GE T', '', 'G\u0000T', 'POST\t', 'ÄÖÜ', 'CONNECT'])} ${pick([`${path}/${token(20)}`, '*', '', `/${'a'.repeat(5000)}`, '%%%', `${path}/../../etc/passwd`, 'http://evil/', `${path}/%00%ff`])} HTTP/1.1\r\nHost: x\r\n\r\n`,
      ],
      'huge or malformed headers': () => [
        pick([
          head('GET', path, [`X-Big: ${'b'.repeat(20_000)}`]),
          head('GET', path, ['NoColonHere']),
          head('GET', path, ['X-Nul: a\u0000b']),
          head('GET', path, [' X-Folded: a', '\tcontinued']),
          head('POST', path, ['Content-Length: 5', 'Content-Length: 6']),
          head('POST', path, ['Content-Length: -1']),
          head('POST', path, ['Content-Length: 99999999999999999999']),
          head('POST', path, ['Transfer-Encoding: chunked', 'Content-Length: 3']),
          head(
            'GET',
            path,
            Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'v'.repeat(50)}`),
          ),
          `GET ${path} HTTP/1.1\r\n${bytes(200).toString('latin1')}\r\n\r\n`,
        ]),
      ],
      'invalid UTF-8 body': () => {
        const body = bytes(1 + Math.floor(next() * 2000));
        return [
          head('POST', path, [
            `Content-Length: ${body.length}`,
            'Content-Type: text/plain; charset=utf-8',
            'Connection: close',
          ]),
          body,
        ];
      },
      'deeply nested or malformed JSON': () => {
        const depth = 1 + Math.floor(next() * 50_000);
        const body = pick([
          '['.repeat(depth) + ']'.repeat(depth),
          '{"a":'.repeat(Math.min(depth, 20_000)) + '1' + '}'.repeat(Math.min(depth, 20_000)),
          '['.repeat(depth),
          `{"unterminated": "${'x'.repeat(100)}`,
          '{"a":1,}',
          '\u0000{"a":1}',
          `[${'1,'.repeat(10_000)}1]`,
        ]);
        return [
          head('POST', path, [
            `Content-Length: ${Buffer.byteLength(body)}`,
            'Content-Type: application/json',
            'Connection: close',
          ]),
          body,
        ];
      },
      'lying Content-Length': () => {
        const body = 'x'.repeat(100);
        return pick([
          [head('POST', path, ['Content-Length: 10']), body], // shorter: the rest is parsed as a next request
          [head('POST', path, ['Content-Length: 5000']), body, 'end'], // longer, then the sender stops
        ]);
      },
      'broken chunked encoding': () => [
        head('POST', path, ['Transfer-Encoding: chunked']),
        pick([
          'zz\r\nhello\r\n0\r\n\r\n',
          '5\r\nhelloXX\r\n0\r\n\r\n',
          'fffffffffffffffff\r\n',
          '3\r\nabc\r\n',
          '-1\r\n\r\n',
          '5;ext=\u0000\r\nhello\r\n0\r\n\r\n',
        ]),
        'end',
      ],
      'abrupt disconnect mid-body': () => [
        head('POST', path, ['Content-Length: 100000']),
        'y'.repeat(Math.floor(next() * 50_000)),
        'destroy',
      ],
      'body past the read limit': () => [
        head('POST', path, ['Content-Length: 400000', 'Connection: close']),
        Buffer.alloc(300 * 1024, 0x61),
      ],
    };

    const plan: Array<[string, () => Exchange]> = [];
    const counts: Record<string, number> = {};
    const weights: Record<string, number> = {
      'invalid method or path': 2000,
      'huge or malformed headers': 2000,
      'invalid UTF-8 body': 1500,
      'deeply nested or malformed JSON': 1000,
      'lying Content-Length': 1500,
      'broken chunked encoding': 1000,
      'abrupt disconnect mid-body': 800,
      'body past the read limit': 200,
    };
    for (const [name, count] of Object.entries(weights)) {
      counts[name] = count;
      for (let i = 0; i < count; i++) plan.push([name, categories[name] as () => Exchange]);
    }
    // Shuffle deterministically so categories interleave.
    for (let i = plan.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [plan[i], plan[j]] = [plan[j] as [string, () => Exchange], plan[i] as [string, () => Exchange]];
    }

    // The watcher lives in this process too: drop what it receives so its own buffer is not
    // counted as server growth (the check below only needs the last message).
    const drain = setInterval(() => (watcher.messages.length = 0), 50);
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const statuses = new Map<number, number>();
    const outcomes: RawOutcome[] = await pool(
      plan.map(
        ([, make]) =>
          () =>
            rawExchange(port, make()),
      ),
      CONCURRENCY,
    );
    for (const { status } of outcomes) statuses.set(status, (statuses.get(status) ?? 0) + 1);

    // A few slowloris senders, trickling past the request timeout.
    const slow = await Promise.all(
      Array.from({ length: 5 }, () =>
        rawExchange(
          port,
          [
            head('POST', path, ['Content-Length: 1000']),
            ...Array.from({ length: 12 }, () => [200, 'z'] as const).flat(),
          ],
          6000,
        ),
      ),
    );
    counts['slow trickled body'] = slow.length;

    // Hostile WebSocket traffic: huge frames, malformed protocol messages, binary frames.
    const wsMessages = [
      'not json',
      '{',
      '[]',
      'null',
      '{"type":42}',
      '{"type":"join","endpointId":{},"key":[]}',
      '{"type":"join","endpointId":"x","key":"y","afterSeq":1e308}',
      '{"type":"set-response","response":{"status":"200"}}',
      `{"type":"create","junk":${'['.repeat(500)}${']'.repeat(500)}}`,
      '{"type":"clear"}',
    ];
    let wsTried = 0;
    const hostileSockets = await pool(
      Array.from({ length: 100 }, (_, i) => async () => {
        const socket = new WebSocket(`${server.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL]);
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
        const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
        socket.on('error', () => undefined);
        for (const message of wsMessages) {
          socket.send(message);
          wsTried++;
        }
        socket.send(bytes(64), { binary: true });
        wsTried++;
        if (i % 4 === 0) {
          socket.send('x'.repeat(1600 * 1024));
          wsTried++;
          return closed;
        }
        socket.close();
        return closed;
      }),
      20,
    );
    counts['websocket: huge frames, malformed and binary messages'] = wsTried;
    expect(hostileSockets.filter((code) => code === 1009).length).toBe(25);

    clearInterval(drain);
    watcher.messages.length = 0;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`hostile input: ${total} tried in ${((Date.now() - started) / 1000).toFixed(1)} s`, counts);
    console.log('hostile input: answers by status', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
    expect(total).toBeGreaterThanOrEqual(10_000);
    // The framing errors got our answers, not silence: 400, 408, 413 and 431 all appear.
    for (const status of [400, 413, 431]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
    expect(slow.every(({ status }) => status === 408)).toBe(true);

    // Alive, still capturing, still delivering to the watcher connected all along.
    expect((await send(`${server.baseUrl}/healthz`)).status).toBe(200);
    const marker = `still-fine-${Date.now()}`;
    expect((await send(url, { method: 'POST', body: marker })).status).toBe(200);
    await expect
      .poll(() => watcher.messages.some((m) => m.type === 'request' && m.request.body === marker), { timeout: 5000 })
      .toBe(true);

    const growth = process.memoryUsage().rss - rssBefore;
    console.log(
      `hostile input: RSS grew ${(growth / 1024 / 1024).toFixed(1)} MiB (bound ${RSS_BOUND_BYTES / 1024 / 1024} MiB)`,
    );
    expect(growth).toBeLessThan(RSS_BOUND_BYTES);
  }, 120_000);
});
