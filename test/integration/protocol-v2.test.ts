import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.js';
import { defaultConfig } from '../../src/config.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { openDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore } from '../../src/one-process/sqlite-store.js';
import { createStoreByKind } from '../../src/one-process/store-by-kind.js';
import { createRedisBus } from '../../src/redis/bus.js';
import { createRedisStore } from '../../src/redis/store.js';
import { bodyBytesOf } from '../../src/shared/body-text.js';
import { LIVE_PATH, RECEIVER_PREFIXES, SUBPROTOCOL_V1 } from '../../src/shared/protocol.js';
import { decodeRequestFrame } from '../../src/shared/request-frame.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { storeLimits, type Store } from '../../src/store/store.js';
import { send } from '../helpers/http.js';
import { connectRedis, dropPrefix, testPrefix } from '../helpers/redis.js';
import { startServer } from '../helpers/server.js';
import { SocketClient } from '../helpers/socket-client.js';

const limits = storeLimits(defaultConfig());
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Each backend, with the endpoint kind it holds. */
const backends: Array<[string, 'live' | 'kept', () => { store: Store; bus: Bus }]> = [
  ['memory', 'live', () => ((bus) => ({ store: createMemoryStore({ ...limits, bus }), bus }))(createMemoryBus())],
  [
    'SQLite',
    'kept',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'hookwatch-v2-'));
      const db = openDatabase(join(dir, 'hookwatch.db'));
      cleanups.push(
        () => rmSync(dir, { recursive: true, force: true }),
        () => db.close(),
      );
      const bus = createMemoryBus();
      const kept = createSqliteStore({ ...limits, maxDiskBytes: 1 << 30, db, bus });
      return { store: createStoreByKind({ live: createMemoryStore({ ...limits, bus }), kept }), bus };
    },
  ],
  [
    'Redis',
    'live',
    () => {
      const [commands, subscriber]: Redis[] = [connectRedis(), connectRedis()];
      const prefix = testPrefix();
      cleanups.push(async () => {
        await dropPrefix(commands as Redis, prefix);
        commands?.disconnect();
        subscriber?.disconnect();
      });
      return {
        store: createRedisStore({ ...limits, redis: commands as Redis, prefix, commandTimeoutMs: 2000 }),
        bus: createRedisBus({ publisher: commands as Redis, subscriber: subscriber as Redis, prefix }),
      };
    },
  ],
];

/** Bodies a sender may send, each of which must reach every watcher byte for byte. */
const bodies: Array<[string, Buffer, string]> = [
  ['JSON', Buffer.from('{"a":"é \\"q\\"","n":[1,2]}'), 'application/json'],
  ['every byte value', Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)), 'application/octet-stream'],
  ['control-heavy text', Buffer.alloc(3000, 0x01), 'text/plain'],
  ['empty', Buffer.alloc(0), 'text/plain'],
  ['200 KiB of random bytes', randomBytes(200 * 1024), 'application/octet-stream'],
  ['text with a UTF-8 BOM', Buffer.from('\ufeffhello', 'utf8'), 'text/plain'],
];

/** A raw v2 socket that keeps each frame as it came: binary or text. */
async function rawV2(wsUrl: string, endpointId: string, key: string) {
  const socket = new WebSocket(`${wsUrl}${LIVE_PATH}`, ['hookwatch.v2']);
  const frames: Array<{ data: Buffer; binary: boolean }> = [];
  socket.on('message', (data, binary) => frames.push({ data: data as Buffer, binary }));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  socket.send(JSON.stringify({ type: 'join', endpointId, key }));
  return { socket, frames };
}

const withoutBody = ({ body: _body, bodyEncoding: _encoding, ...rest }: CapturedRequest) => rest;

describe.each(backends)('protocol v2 and v1 side by side: %s', (_name, kind, make) => {
  it('gives a v2 socket each request as one binary frame and a v1 socket the same record as JSON, every body byte for byte', async () => {
    const { store, bus } = make();
    const server = await startServer({ keptMaxBodyBytes: 1024 * 1024 }, { store, bus });
    cleanups.push(() => server.close());
    const created = await send(`${server.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind }),
    });
    const endpoint = JSON.parse(created.text) as { id: string; key: string };
    const v2 = await SocketClient.join(server.wsUrl, endpoint.id, endpoint.key);
    const v1 = await SocketClient.open(server.wsUrl, SUBPROTOCOL_V1);
    v1.send({ type: 'join', endpointId: endpoint.id, key: endpoint.key });
    await v1.next('welcome');
    const raw = await rawV2(server.wsUrl, endpoint.id, endpoint.key);
    cleanups.push(
      () => v2.client.close(),
      () => v1.close(),
      () => raw.socket.close(),
    );
    expect([v2.client.socket.protocol, v1.socket.protocol]).toEqual(['hookwatch.v2', 'hookwatch.v1']);
    await expect.poll(() => raw.frames.some((frame) => frame.data.includes('"welcome"'))).toBe(true);

    for (const [, body, type] of bodies) {
      const sent = await send(`${server.baseUrl}${RECEIVER_PREFIXES[kind]}${endpoint.id}/sub?q=1`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      expect(sent.status).toBe(200);
    }
    const [fromV2, fromV1] = await Promise.all([v2.client.requests(bodies.length), v1.requests(bodies.length)]);
    for (const [at, [name, body]] of bodies.entries()) {
      const [two, one] = [fromV2[at] as CapturedRequest, fromV1[at] as CapturedRequest];
      expect(Buffer.from(bodyBytesOf(two)).equals(body), name).toBe(true);
      expect(Buffer.from(bodyBytesOf(one)).equals(body), name).toBe(true);
      expect(withoutBody(two), name).toEqual(withoutBody(one));
      expect(two.storedSize, name).toBe(body.length);
    }
    // v1 escapes text only when that is cheap; v2 sends the bytes, and valid UTF-8 reads as text.
    expect(fromV1.map((request) => request.bodyEncoding)).toEqual([
      'utf8',
      'base64',
      'base64',
      'utf8',
      'base64',
      'utf8',
    ]);
    expect(fromV2[2]?.bodyEncoding).toBe('utf8');

    // On the wire: every request is a binary frame, every other message text.
    await expect.poll(() => raw.frames.filter((frame) => frame.binary).length).toBe(bodies.length);
    for (const frame of raw.frames) {
      if (!frame.binary) expect((JSON.parse(frame.data.toString()) as { type: string }).type).not.toBe('request');
    }
    const binary = raw.frames.filter((frame) => frame.binary).map((frame) => decodeRequestFrame(frame.data).request);
    expect(binary.map((request) => request.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // The 200 KiB body costs its size plus a small header, not 4/3 of it.
    const largest = raw.frames.filter((frame) => frame.binary)[4]?.data.length ?? 0;
    expect(largest).toBeGreaterThan(200 * 1024);
    expect(largest).toBeLessThan(200 * 1024 + 2048);

    // A v2 socket joining later gets the backlog as binary frames too; the HTTP API still reads JSON.
    const late = await SocketClient.join(server.wsUrl, endpoint.id, endpoint.key);
    cleanups.push(() => late.client.close());
    expect((await late.client.requests(bodies.length)).map((request) => Buffer.from(bodyBytesOf(request)))).toEqual(
      bodies.map(([, body]) => body),
    );
    const polled = await send(`${server.baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${endpoint.key}` },
    });
    const { requests } = JSON.parse(polled.text) as { requests: CapturedRequest[] };
    expect(requests.map((request) => Buffer.from(bodyBytesOf(request)))).toEqual(bodies.map(([, body]) => body));
  });
});
