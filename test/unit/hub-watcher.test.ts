import pino from 'pino';
import type { WebSocket } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig } from '../../src/config.js';
import { createHub, type Hub } from '../../src/socket/hub.js';
import { requestFramed, Watcher } from '../../src/socket/watcher.js';
import { encodeRecord } from '../../src/store/stored-request.js';
import { DELETED_MESSAGE } from '../../src/shared/server-messages.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { storeLimits } from '../../src/store/store.js';
import { FakeSocket } from '../helpers/fake-socket.js';

const request = (seq: number) => requestFramed({ seq, answer: '{}', record: encodeRecord('{}', new Uint8Array()) });
const seqsOf = (socket: FakeSocket) => socket.of('request').map((message) => message.request.seq);

describe('Watcher', () => {
  const watcherOn = (socket: FakeSocket, maxBufferBytes = 1024 * 1024, onSlow: () => void = () => undefined) =>
    new Watcher(socket as unknown as WebSocket, 'e', 1, maxBufferBytes, onSlow);

  it('delivers each request at most once, in seq order, and drops what it already sent', async () => {
    const socket = new FakeSocket();
    const watcher = watcherOn(socket);
    await watcher.replay([]);
    for (const seq of [1, 2, 2, 1, 3]) watcher.deliver(request(seq));
    expect(seqsOf(socket)).toEqual([1, 2, 3]);
  });

  it('holds live messages back while the backlog is sent, then sends them without repeats', async () => {
    const socket = new FakeSocket();
    const watcher = watcherOn(socket);
    watcher.deliver(request(3));
    watcher.deliver(request(4));
    expect(seqsOf(socket)).toEqual([]);
    await watcher.replay([request(1), request(2), request(3)]);
    expect(seqsOf(socket)).toEqual([1, 2, 3, 4]);
  });

  it('cuts a socket that falls behind its buffer cap instead of queueing more', async () => {
    const socket = new FakeSocket();
    let slow = 0;
    const watcher = watcherOn(socket, 64 * 1024, () => slow++);
    await watcher.replay([]);
    socket.bufferedAmount = 64 * 1024 + 1;
    watcher.deliver(request(1));
    expect(slow).toBe(1);
    expect(socket.closeCode).toBe(1006);
    expect(seqsOf(socket)).toEqual([]);
  });
});

describe('Hub', () => {
  let hub: Hub | undefined;
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
  });
  const rig = (maxWatchersPerEndpoint = 2) => {
    const config = defaultConfig();
    const bus = createMemoryBus();
    const clock = { ms: Date.now() };
    const store = createMemoryStore({ ...storeLimits(config), bus, now: () => clock.ms });
    hub = createHub({
      store,
      bus,
      instanceId: 'a',
      leaseMs: 60_000,
      graceMs: 1000,
      maxWatchersPerEndpoint,
      log: pino({ level: 'silent' }),
    });
    const endpoint = async (id: string) => {
      await store.createEndpoint(
        {
          id,
          kind: 'live',
          keyHash: 'ab'.repeat(32),
          createdAt: new Date().toISOString(),
          response: { status: 200, body: '', contentType: 'text/plain', headers: [], delayMs: 0 },
        },
        { maxEndpoints: 10, deadlineMs: Date.now() + 60_000 },
      );
      return id;
    };
    const watcher = async (id: string) => {
      const socket = new FakeSocket();
      const watching = new Watcher(socket as unknown as WebSocket, id, 1, 1024 * 1024, () => undefined);
      const attached = await (hub as Hub).attach(id, watching);
      if (attached === 'attached') await watching.replay([]);
      return { socket, watching, attached };
    };
    return { store, bus, hub, clock, endpoint, watcher };
  };

  it("fans a bus message out to the endpoint's watchers only, and counts them", async () => {
    const { bus, endpoint, watcher } = rig();
    const a = await watcher(await endpoint('a'));
    const a2 = await watcher('a');
    const b = await watcher(await endpoint('b'));
    await bus.publish('a', { seq: 1, data: JSON.stringify({ type: 'request', request: { seq: 1 } }) });
    expect(seqsOf(a.socket)).toEqual([1]);
    expect(seqsOf(a2.socket)).toEqual([1]);
    expect(seqsOf(b.socket)).toEqual([]);
    expect(hub?.watcherCount('a')).toBe(2);
    expect(hub?.watcherTotal()).toBe(3);
    expect(hub?.channelCount()).toBe(2);
  });

  it('refuses a watcher past the per-endpoint cap, and an endpoint that is gone', async () => {
    const { endpoint, watcher } = rig(1);
    await watcher(await endpoint('a'));
    expect((await watcher('a')).attached).toBe('full');
    expect((await watcher('missing')).attached).toBe('gone');
    expect(hub?.watcherTotal()).toBe(1);
  });

  it('closes every watcher of an endpoint that ends (4004), with the message that says why', async () => {
    const { store, endpoint, watcher } = rig();
    const a = await watcher(await endpoint('a'));
    await store.deleteEndpoint('a');
    expect(a.socket.of('expired')).toEqual([JSON.parse(DELETED_MESSAGE)]);
    expect(a.socket.closeCode).toBe(4004);
    expect(hub?.watcherTotal()).toBe(0);
    expect(hub?.channelCount()).toBe(0);
  });

  it('gives its lease back when the last watcher leaves, so a live endpoint dies a grace later', async () => {
    const { store, clock, endpoint, watcher } = rig();
    const a = await watcher(await endpoint('a'));
    hub?.detach('a', a.watching);
    expect(hub?.channelCount()).toBe(0);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    clock.ms += 999;
    expect(await store.getEndpoint('a')).toBeDefined();
    clock.ms += 2;
    expect(await store.getEndpoint('a')).toBeUndefined();
  });
});
