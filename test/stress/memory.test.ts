import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startInstance, type Instance } from '../helpers/instances.js';

/**
 * Issue #22's findings 1-3, scaled down, against the built server in its own process so that
 * its RSS is measured alone: a sender or a reader who holds memory the budgets do not count.
 * Each test checks the process against the sizing formula of docs/deploy.md#sizing.
 */
const MIB = 1024 * 1024;
const SETTINGS = {
  MAX_STORED_BYTES: 32 * MIB,
  MAX_STORED_BYTES_PER_ENDPOINT: 32 * MIB,
  MAX_READING_BYTES: 16 * MIB,
  MAX_SOCKET_BUFFER_BYTES: 16 * MIB,
  MAX_API_ANSWER_BYTES: 32 * MIB,
  MAX_API_ANSWER_BYTES_PER_ADDRESS: 8 * MIB,
  MAX_RESPONSE_CONFIG_BYTES: 16 * MIB,
  MAX_KEPT_ENDPOINTS: 10_000,
  KEPT_CREATES_PER_ADDRESS: 0,
  MAX_KEPT_PER_ADDRESS: 250,
  RATE_LIMIT_PER_ENDPOINT: 0,
  RATE_LIMIT_PER_ADDRESS: 0,
};
/** docs/deploy.md#sizing, with no watcher stuck. */
const RSS_BOUND =
  150 * MIB +
  3 * SETTINGS.MAX_STORED_BYTES +
  2 * SETTINGS.MAX_READING_BYTES +
  SETTINGS.MAX_API_ANSWER_BYTES +
  2 * SETTINGS.MAX_RESPONSE_CONFIG_BYTES;

let server: Instance;
let peakRss = 0;
let sampler: NodeJS.Timeout | undefined;
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))?.[1]) * 1024;
const bearer = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

async function keptEndpoint(): Promise<{ id: string; key: string; url: string }> {
  const created = await send(`${server.baseUrl}/api/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"kind":"kept"}',
  });
  expect(created.status).toBe(201);
  return JSON.parse(created.text) as { id: string; key: string; url: string };
}

/** Sends `count` POSTs of `body` to `url`, four at a time; resolves with their statuses. */
async function flood(url: string, body: Buffer, count: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next++ < count) statuses.push((await send(url, { method: 'POST', body })).status);
    }),
  );
  return statuses;
}

function expectWithinBound(): void {
  expect(server.process.exitCode).toBeNull();
  expect(rss()).toBeLessThanOrEqual(RSS_BOUND);
  expect(peakRss).toBeLessThanOrEqual(RSS_BOUND);
}

describe('memory no sender or reader can pin (scaled down)', () => {
  beforeAll(async () => {
    server = await startInstance({
      LOG_LEVEL: 'error',
      ...Object.fromEntries(Object.entries(SETTINGS).map(([k, v]) => [k, String(v)])),
    });
    sampler = setInterval(() => (peakRss = Math.max(peakRss, rss())), 50);
  });
  afterAll(async () => {
    clearInterval(sampler);
    console.log(`memory: server RSS peak ${(peakRss / MIB).toFixed(1)} MiB, bound ${(RSS_BOUND / MIB).toFixed(0)} MiB`);
    await server?.kill();
  });

  it('an old kept request does not keep the bytes of every later trimmed request alive', async () => {
    const kept = await keptEndpoint();
    expect((await send(kept.url, { method: 'POST', body: 'one small request' })).status).toBe(200);
    const { client, welcome } = await SocketClient.create(server.wsUrl);
    // 400 MiB through an endpoint that keeps the newest 50 and 32 MiB: without the fix each
    // trimmed request stayed reachable behind the kept one, about 1 MiB each.
    const statuses = await flood(welcome.endpoint.url, Buffer.alloc(MIB, 'b'), 400);
    expect(statuses.filter((status) => status === 200).length).toBe(400);
    await client.close();
    expectWithinBound();
  }, 120_000);

  it('polls that are never read hold at most the per-address cap, and the rest are refused at once', async () => {
    const { client, welcome } = await SocketClient.create(server.wsUrl);
    const body = Buffer.alloc(MIB, 0x80);
    await flood(welcome.endpoint.url, body, 24);
    const { id, key } = welcome.endpoint;
    const readers: Socket[] = [];
    const answers: string[] = [];
    // Ten connections from each of three addresses ask for the whole log and never read.
    await Promise.all(
      ['127.0.0.2', '127.0.0.3', '127.0.0.4'].flatMap((from) =>
        Array.from(
          { length: 10 },
          (_, i) =>
            new Promise<void>((resolve) => {
              const socket = connect({ host: '127.0.0.1', port: server.port, localAddress: from });
              readers.push(socket);
              socket.on('error', () => resolve());
              socket.once('data', (chunk) => {
                answers[readers.indexOf(socket)] = chunk.toString('latin1', 0, 12);
                socket.pause();
                resolve();
              });
              socket.write(
                `GET /api/endpoints/${id}/requests?afterSeq=${i} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`,
              );
            }),
        ),
      ),
    );
    // Each page is at most about 4 MiB; what the kernel's socket buffers do not take is counted,
    // and past 8 MiB an address's polls are refused.
    expect(answers.filter((answer) => /^HTTP\/1\.1 (200|429)/.test(answer)).length).toBe(30);
    const metrics = (await send(`${server.baseUrl}/metrics`)).text;
    expect(Number(/^hookwatch_api_answer_bytes (\d+)/m.exec(metrics)?.[1])).toBeLessThanOrEqual(
      3 * SETTINGS.MAX_API_ANSWER_BYTES_PER_ADDRESS,
    );
    expectWithinBound();
    for (const socket of readers) socket.destroy();
    await client.close();
  }, 120_000);

  it('response configurations stop at their budget instead of growing memory', async () => {
    const response = JSON.stringify({ status: 200, body: 'c'.repeat(64 * 1024), contentType: 'text/plain' });
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const endpoint = await keptEndpoint();
      statuses.push(
        (
          await send(`${server.baseUrl}/api/endpoints/${endpoint.id}/response`, {
            method: 'PUT',
            headers: bearer(endpoint.key),
            body: response,
          })
        ).status,
      );
    }
    // About 130 KiB each against 16 MiB: the first 120 or so fit, the rest are refused.
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(100);
    expect(statuses.filter((status) => status === 200).length).toBeLessThan(130);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 503)).toBe(true);
    expectWithinBound();
  }, 120_000);
});
