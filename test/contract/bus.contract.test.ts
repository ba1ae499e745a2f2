import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bus, BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { createRedisBus, decodeBusMessage, encodeBusMessage } from '../../src/redis/bus.js';
import { connectRedis, testPrefix } from '../helpers/redis.js';
import { startTopologies } from '../helpers/sentinel-and-cluster.js';
import { encodeRecord, recordBuffer } from '../../src/store/stored-request.js';
import { splitRecord } from '../../src/shared/request-frame.js';

/** What every Bus backend must do, written once: in memory and on a real Redis (a prefix per bus). */
const clients: Redis[] = [];
const topologies = await startTopologies();
const backends: Array<[string, () => { bus: Bus; subscriber?: Redis }]> = [
  ['memory', () => ({ bus: createMemoryBus() })],
  [
    'redis',
    () => {
      const [publisher, subscriber] = [connectRedis(), connectRedis()];
      clients.push(publisher, subscriber);
      return { bus: createRedisBus({ publisher, subscriber, prefix: testPrefix() }), subscriber };
    },
  ],
  [
    'redis sentinel',
    () => ({
      bus: createRedisBus({
        publisher: topologies.sentinelClient(),
        subscriber: topologies.sentinelClient(),
        prefix: testPrefix(),
      }),
    }),
  ],
  [
    'redis cluster',
    () => ({
      bus: createRedisBus({
        publisher: topologies.clusterClient(),
        subscriber: topologies.clusterClient(true),
        prefix: testPrefix(),
        partitions: 6,
      }),
    }),
  ],
];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await topologies.stop();
});

function collect(bus: Bus) {
  const seen: Array<[string, BusMessage]> = [];
  bus.onMessage((endpointId, message) => seen.push([endpointId, message]));
  return seen;
}

/** A request message whose record's header says `url`. */
const requestOf = (url: string) => ({ answer: '{}', record: encodeRecord(JSON.stringify({ url }), new Uint8Array()) });

describe.each(backends)('Bus contract: %s', (_name, makeBus) => {
  it('delivers each message of a subscribed endpoint once, in publish order, and nothing else', async () => {
    const { bus } = makeBus();
    const seen = collect(bus);
    await bus.subscribe('e1');
    for (let seq = 1; seq <= 3; seq++)
      await bus.publish('e1', { seq, request: requestOf(`m${seq}`), capturedAtMs: 1000 + seq });
    await bus.publish('e2', { data: 'not subscribed' });
    await bus.publish('e1', { data: 'event' });
    await expect.poll(() => seen.length).toBe(4);
    expect(
      seen.map(
        ([endpointId, message]) =>
          `${endpointId}:${message.request ? splitRecord(recordBuffer(message.request.record)).header.url : String(message.data)}:${message.seq}:${message.capturedAtMs}`,
      ),
    ).toEqual(['e1:m1:1:1001', 'e1:m2:2:1002', 'e1:m3:3:1003', 'e1:event:undefined:undefined']);
  });

  it('stops delivering after unsubscribe, and resubscribing in call order works', async () => {
    const { bus } = makeBus();
    const seen = collect(bus);
    await bus.subscribe('e1');
    await bus.unsubscribe('e1');
    await bus.publish('e1', { data: 'after' });
    await bus.publish('nobody', { data: 'x' });
    // Unsubscribe and subscribe issued back to back (the last watcher leaves as another arrives).
    const unsubscribing = bus.unsubscribe('e1');
    const subscribing = bus.subscribe('e1');
    await Promise.all([unsubscribing, subscribing]);
    await bus.publish('e1', { data: 'late' });
    await expect.poll(() => seen.length).toBe(1);
    expect(String(seen[0]?.[1].data)).toBe('late');
  });

  it('after losing its connection, resubscribes and says so, and delivers again', async () => {
    const { bus, subscriber } = makeBus();
    if (!subscriber) return; // the memory bus cannot lose a connection
    const seen = collect(bus);
    let reconnected = 0;
    bus.onReconnect(() => reconnected++);
    await bus.subscribe('e1');
    subscriber.disconnect(true);
    await expect.poll(() => reconnected, { timeout: 5000 }).toBe(1);
    await bus.publish('e1', { seq: 9, request: requestOf('back') });
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]?.[1].seq).toBe(9);
  });
});

describe('the Redis bus wire form', () => {
  it('carries seq and capture time ahead of the stored bytes, which pass unchanged', () => {
    const request = {
      answer: '{"status":200}',
      record: encodeRecord('{"url":"\\n R 1 2"}', Buffer.from('\n R 3 4\n')),
    };
    expect(decodeBusMessage(Buffer.from(encodeBusMessage({ seq: 5, capturedAtMs: 123, request })))).toEqual({
      seq: 5,
      capturedAtMs: 123,
      request,
    });
    expect(decodeBusMessage(Buffer.from('R 5 123\n\x00\x00'))).toBeUndefined();
    expect(String(decodeBusMessage(Buffer.from(encodeBusMessage({ data: '{"type":"cleared"}' })))?.data)).toBe(
      '{"type":"cleared"}',
    );
  });

  it('carries who a replay message is for: the forwarders, or one watcher', () => {
    const order = Buffer.from('{"type":"replay","id":"w.r1","seq":3}');
    expect(decodeBusMessage(Buffer.from(encodeBusMessage({ data: order, toForwarders: true })))).toEqual({
      data: order,
      toForwarders: true,
    });
    const result = Buffer.from('{"type":"replay-result","id":"r1"}');
    expect(decodeBusMessage(Buffer.from(encodeBusMessage({ data: result, toWatcher: 'V1StGXR8_Z5j' })))).toEqual({
      data: result,
      toWatcher: 'V1StGXR8_Z5j',
    });
  });
});
