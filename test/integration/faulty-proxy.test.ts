import { once } from 'node:events';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFaultyProxy, type FaultyProxy } from '../helpers/faulty-proxy.js';
import { startRedisServer } from '../helpers/instances.js';
import { connectRedis } from '../helpers/redis.js';

/** Resolves when `condition()` holds; throws after `timeoutMs` (polls, for states with no event). */
async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What a promise has done so far, without waiting for it. */
function track<T>(promise: Promise<T>): { settled: () => boolean; result: Promise<T> } {
  let settled = false;
  const result = promise.finally(() => (settled = true));
  return { settled: () => settled, result };
}

describe('faulty proxy', () => {
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let direct: Redis;
  let proxy: FaultyProxy;
  const clients: Redis[] = [];

  /** An ioredis client through the proxy, with ioredis's defaults unless `options` says otherwise. */
  function connectThroughProxy(options: RedisOptions = {}): { client: Redis; events: string[] } {
    const client = new Redis(proxy.url, options);
    const events: string[] = [];
    client.on('error', (error: Error) => events.push(`error: ${error.message}`));
    for (const name of ['ready', 'close', 'reconnecting']) client.on(name, () => events.push(name));
    clients.push(client);
    return { client, events };
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    direct = connectRedis(redis.url);
  });
  afterAll(async () => {
    direct.disconnect();
    await redis.stop();
  });
  beforeEach(async () => {
    await direct.flushdb();
    proxy = await startFaultyProxy({ host: '127.0.0.1', port: redis.port });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await proxy.close();
  });

  it('forwards pipelined commands and pairs every one with its reply', async () => {
    const { client } = connectThroughProxy();
    expect(await client.set('k', 'v1')).toBe('OK');
    expect(await client.get('k')).toBe('v1');
    const pipeline = client.pipeline();
    for (let i = 0; i < 50; i += 1) pipeline.incr('n');
    const results = await pipeline.exec();
    expect(results?.map(([, value]) => value)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // A bulk string larger than one TCP read, so frames are reassembled across chunks.
    const big = 'x'.repeat(1_000_000);
    await client.set('big', big);
    expect(await client.get('big')).toBe(big);
    const { commands, replies } = proxy.counts();
    expect(replies).toBe(commands);
    expect(commands).toBeGreaterThanOrEqual(54);
    expect(proxy.connections()).toBe(1);
  });

  it('forwards RESP3 pushes on a tracked connection without taking them for replies', async () => {
    const { client } = connectThroughProxy();
    await client.call('CLIENT', 'TRACKING', 'ON');
    await client.set('k', 'v1');
    expect(await client.get('k')).toBe('v1');
    // The write from another connection makes Redis push an `invalidate` to the tracking one.
    await direct.set('k', 'v2');
    await waitFor('the invalidation push', () => proxy.counts().pushes > 0);
    expect(await client.get('k')).toBe('v2');
    const { commands, replies } = proxy.counts();
    expect(replies).toBe(commands);
  });

  it('passes a subscribed connection through untouched', async () => {
    const { client: subscriber } = connectThroughProxy();
    const { client } = connectThroughProxy();
    await subscriber.subscribe('news', 'sport');
    const received: string[] = [];
    subscriber.on('message', (channel: string, message: string) => received.push(`${channel}:${message}`));
    for (let i = 0; i < 5; i += 1) await direct.publish(i % 2 === 0 ? 'news' : 'sport', String(i));
    await waitFor('five messages', () => received.length === 5);
    expect(received).toEqual(['news:0', 'sport:1', 'news:2', 'sport:3', 'news:4']);
    expect(await client.incr('n')).toBe(1);
    expect(proxy.connections()).toBe(2);
  });

  it('drops the reply to a command Redis executed; ioredis reconnects and runs it a second time', async () => {
    const { client, events } = connectThroughProxy();
    expect(await client.set('k', 'v1')).toBe('OK');
    const dropped = proxy.dropReplyTo(([name, key]) => name === 'INCR' && key === 'counter');
    const reply = client.incr('counter');
    await dropped;
    // ioredis saw the connection close with INCR unanswered, reconnected, and (by default,
    // autoResendUnfulfilledCommands: true) wrote INCR again on the new connection. The caller
    // gets the second execution's reply; Redis ran it twice. A retried write is not idempotent.
    expect(await reply).toBe(2);
    expect(await direct.get('counter')).toBe('2');
    expect(events).toEqual(['ready', 'close', 'reconnecting', 'ready']);
    expect(await client.get('k')).toBe('v1');
  });

  it('drops the reply to an EVALSHA matched by its script hash', async () => {
    const { client } = connectThroughProxy();
    const script = "return redis.call('INCR', KEYS[1])";
    const sha = String(await client.script('LOAD', script));
    const dropped = proxy.dropReplyTo(([name, hash]) => name === 'EVALSHA' && hash === sha);
    const reply = client.evalsha(sha, 1, 'counter');
    await dropped;
    expect(await reply).toBe(2);
    expect(await direct.get('counter')).toBe('2');
  });

  it('with autoResendUnfulfilledCommands off, Redis ran the command once and its promise never settles', async () => {
    const { client } = connectThroughProxy({ autoResendUnfulfilledCommands: false });
    await client.ping();
    const dropped = proxy.dropReplyTo(([name]) => name === 'INCR');
    const reconnected = once(client, 'ready');
    const reply = track(client.incr('counter'));
    await dropped;
    // ioredis discards the unanswered command on reconnect without rejecting it: a caller
    // awaiting it hangs. So does any command written between the drop and ioredis noticing the
    // close, hence waiting for 'ready' first. A later command answered shows the client moved on.
    await reconnected;
    expect(await client.incr('other')).toBe(1);
    expect(reply.settled()).toBe(false);
    expect(await direct.get('counter')).toBe('1');
  });

  it('in a pipeline, the commands after the dropped reply are aborted, not resent', async () => {
    const { client } = connectThroughProxy();
    await client.ping();
    const dropped = proxy.dropReplyTo(([name]) => name === 'INCR');
    const results = client.pipeline().set('a', '1').incr('counter').get('a').exec();
    await dropped;
    const [set, incr, get] = (await results) ?? [];
    expect(set).toEqual([null, 'OK']);
    expect(incr?.[0]).toBeInstanceOf(Error);
    expect((incr?.[0] as Error).message).toBe('Command aborted due to connection close');
    expect((get?.[0] as Error).message).toBe('Command aborted due to connection close');
    expect(await direct.get('counter')).toBe('1');
    expect(await client.get('a')).toBe('1');
  });

  it('killAll cuts every connection and the client connects again', async () => {
    const { client, events } = connectThroughProxy();
    await client.set('k', 'v1');
    expect(proxy.connections()).toBe(1);
    const closed = once(client, 'close');
    proxy.killAll();
    await closed;
    expect(proxy.connections()).toBe(0);
    expect(await client.get('k')).toBe('v1');
    expect(proxy.connections()).toBe(1);
    expect(events).toEqual(['ready', 'close', 'reconnecting', 'ready']);
  });

  it('pause holds a command back from Redis until resume', async () => {
    const { client } = connectThroughProxy();
    await client.ping();
    proxy.pause();
    const set = track(client.set('k', 'v1'));
    const commandsBefore = proxy.counts().commands;
    // Proving that nothing happens needs a window: the SET must not reach Redis within it.
    const windowMs = 300;
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    expect(set.settled()).toBe(false);
    expect(await direct.get('k')).toBeNull();
    expect(proxy.counts().commands).toBe(commandsBefore);
    proxy.resume();
    expect(await set.result).toBe('OK');
    expect(await direct.get('k')).toBe('v1');
  });

  it('pause holds a reply Redis already sent until resume', async () => {
    const { client } = connectThroughProxy();
    await client.ping();
    const popped = track(client.blpop('jobs', 10));
    await waitFor(
      'BLPOP to block in Redis',
      async () =>
        Number(await direct.call('INFO', 'clients').then((info) => /blocked_clients:(\d+)/.exec(String(info))?.[1])) ===
        1,
    );
    proxy.pause();
    await direct.lpush('jobs', 'job-1');
    // The list is empty again: Redis served the blocked BLPOP and wrote its reply to the proxy.
    expect(await direct.llen('jobs')).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(popped.settled()).toBe(false);
    proxy.resume();
    expect(await popped.result).toEqual(['jobs', 'job-1']);
  });
});
