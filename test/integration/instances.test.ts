import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { send } from '../helpers/http.js';
import { startInstance, startRedisServer, type Instance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { connectRedis, dropPrefix, redisUrl, testPrefix } from '../helpers/redis.js';

/**
 * Several real server processes on one real Redis, as an operator runs them behind a load
 * balancer: a request sent to any instance reaches watchers on every instance exactly once, in
 * order; the endpoint lives while any instance has a watcher on it.
 */
const SHARED = {
  RATE_LIMIT_PER_ADDRESS: '0',
  RATE_LIMIT_PER_ENDPOINT: '0',
  LIVE_CONNECTS_PER_ADDRESS: '0',
  GRACE_MS: '1500',
  LEASE_MS: '3000',
};

describe('three instances on one Redis', () => {
  const prefix = testPrefix();
  let instances: Instance[] = [];
  const clients: SocketClient[] = [];
  const track = <T extends { client: SocketClient }>(joined: T): T => {
    clients.push(joined.client);
    return joined;
  };

  beforeAll(async () => {
    instances = await Promise.all(
      [0, 1, 2].map(() => startInstance({ ...SHARED, REDIS_URL: redisUrl, REDIS_PREFIX: prefix })),
    );
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    const redis = connectRedis();
    await dropPrefix(redis, prefix);
    await redis.quit();
  });
  const a = () => instances[0] as Instance;
  const b = () => instances[1] as Instance;
  const c = () => instances[2] as Instance;
  const pathOf = (url: string) => new URL(url).pathname;

  it('delivers 1,000 requests sent concurrently to all three to watchers on each, exactly once and in seq order', async () => {
    const owner = track(await SocketClient.create(a().wsUrl));
    const { id, key, url } = owner.welcome.endpoint;
    const others = [
      track(await SocketClient.join(b().wsUrl, id, key)),
      track(await SocketClient.join(c().wsUrl, id, key)),
    ];
    const total = 1000;
    let next = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (next < total) {
          const n = next++;
          const target = instances[n % 3] as Instance;
          const answer = await send(`${target.baseUrl}${pathOf(url)}/n/${n}`, { method: 'POST', body: `request ${n}` });
          expect(answer.status).toBe(200);
        }
      }),
    );
    for (const watcher of [owner, ...others]) {
      const got: CapturedRequest[] = await watcher.client.requests(total, 20_000);
      expect(got.map((request) => request.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(new Set(got.map((request) => request.body)).size).toBe(total);
      await expect(watcher.client.next('request', 300)).rejects.toThrow();
    }
  }, 60_000);

  it('tells every watcher on every instance how many watch', async () => {
    const onA = track(await SocketClient.create(a().wsUrl));
    const { id, key } = onA.welcome.endpoint;
    track(await SocketClient.join(b().wsUrl, id, key));
    const onC = track(await SocketClient.join(c().wsUrl, id, key));
    await expect
      .poll(() => onA.client.messages.filter((m) => m.type === 'watchers').at(-1), { timeout: 3000 })
      .toEqual({ type: 'watchers', count: 3 });
    await onC.client.close();
    await expect
      .poll(() => onA.client.messages.filter((m) => m.type === 'watchers').at(-1), { timeout: 3000 })
      .toEqual({ type: 'watchers', count: 2 });
  });

  it('gives the same backlog from every instance', async () => {
    const owner = track(await SocketClient.create(b().wsUrl));
    const { id, key, url } = owner.welcome.endpoint;
    for (let i = 0; i < 60; i++)
      await send(`${instances[i % 3]?.baseUrl}${pathOf(url)}`, { method: 'POST', body: `b${i}` });
    const backlogs = [];
    for (const instance of instances) {
      const joined = track(await SocketClient.join(instance.wsUrl, id, key));
      expect(joined.welcome.backlog).toBe(50);
      expect(joined.welcome.lastSeq).toBe(60);
      backlogs.push((await joined.client.requests(50)).map((request) => [request.seq, request.body]));
    }
    expect(backlogs[1]).toEqual(backlogs[0]);
    expect(backlogs[2]).toEqual(backlogs[0]);
    expect(backlogs[0]?.[0]).toEqual([11, 'b10']);
  });

  it('applies a set-response made on A to senders on C, and tells watchers on B', async () => {
    const onA = track(await SocketClient.create(a().wsUrl));
    const { id, key, url } = onA.welcome.endpoint;
    const onB = track(await SocketClient.join(b().wsUrl, id, key));
    // C has captured for the endpoint before, so it knows the default answer: it must not keep it.
    expect((await send(`${c().baseUrl}${pathOf(url)}`, { method: 'POST', body: 'before' })).status).toBe(200);
    const response = {
      status: 409,
      body: 'duplicate delivery',
      contentType: 'text/plain',
      headers: [['Retry-After', '7']],
      delayMs: 0,
    };
    onA.client.send({ type: 'set-response', response });
    expect((await onB.client.next('response')).response).toEqual(response);
    const answer = await send(`${c().baseUrl}${pathOf(url)}`, { method: 'POST', body: 'x' });
    expect(answer.status).toBe(409);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.text).toBe('duplicate delivery');
    const [before, after] = await onB.client.requests(2);
    expect([before?.answer.status, after?.answer.status]).toEqual([200, 409]);
  });

  it('keeps an endpoint while a watcher is on any instance, and ends it a grace after the last one leaves', async () => {
    const creator = await SocketClient.create(a().wsUrl);
    const { id, key, url } = creator.welcome.endpoint;
    const onC = await SocketClient.join(c().wsUrl, id, key);
    await creator.client.close();
    // Nothing to wait on for "still alive": give A's grace (1.5 s) time to pass, then ask.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await send(`${b().baseUrl}${pathOf(url)}`, { method: 'POST' })).status).toBe(200);
    await onC.client.close();
    await expect
      .poll(async () => (await send(`${b().baseUrl}${pathOf(url)}`, { method: 'POST' })).status, {
        timeout: 6000,
        interval: 200,
      })
      .toBe(404);
  });
});

describe('faults', () => {
  const prefix = testPrefix();
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    const redis = connectRedis();
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it('an instance killed with SIGKILL: its watchers reconnect to another and resume with no gap', async () => {
    const [a, b] = await Promise.all(
      [0, 1].map(() => startInstance({ ...SHARED, REDIS_URL: redisUrl, REDIS_PREFIX: prefix })),
    );
    cleanups.push(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
    });
    if (!a || !b) throw new Error('no instances');
    const watcher = await SocketClient.create(a.wsUrl);
    const { id, key, url } = watcher.welcome.endpoint;
    const path = new URL(url).pathname;
    for (let i = 1; i <= 5; i++) await send(`${b.baseUrl}${path}`, { method: 'POST', body: `before ${i}` });
    const seen = (await watcher.client.requests(5)).map((request) => request.seq);
    await a.kill();
    await watcher.client.closed;
    for (let i = 6; i <= 10; i++) await send(`${b.baseUrl}${path}`, { method: 'POST', body: `while away ${i}` });
    // The page's reconnect: join another instance after the last seq it holds.
    const resumed = await SocketClient.join(b.wsUrl, id, key, seen.at(-1));
    cleanups.push(() => resumed.client.close());
    expect(resumed.welcome.gap).toBe(false);
    expect((await resumed.client.requests(5)).map((request) => request.seq)).toEqual([6, 7, 8, 9, 10]);
    await send(`${b.baseUrl}${path}`, { method: 'POST', body: 'after' });
    expect((await resumed.client.requests(1))[0]?.seq).toBe(11);
  }, 30_000);

  it('Redis down at start: the process starts, is not ready, answers 503 STORE_UNAVAILABLE, and recovers when Redis comes', async () => {
    const down = await startRedisServer();
    await down.stop();
    const instance = await startInstance({ ...SHARED, REDIS_URL: down.url, REDIS_PREFIX: prefix });
    cleanups.push(() => instance.stop());
    expect((await send(`${instance.baseUrl}/healthz`)).status).toBe(200);
    expect((await send(`${instance.baseUrl}/readyz`)).status).toBe(503);
    const answer = await send(`${instance.baseUrl}/api/webhook-tester/anything`, { method: 'POST', body: 'x' });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text).error.code).toBe('STORE_UNAVAILABLE');
    const socket = await SocketClient.open(instance.wsUrl);
    socket.send({ type: 'create' });
    expect((await socket.next('error')).error.code).toBe('STORE_UNAVAILABLE');
    expect(await socket.closed).toBe(1013);

    const redis = await startRedisServer(down.port);
    cleanups.push(() => redis.stop());
    await expect
      .poll(async () => (await send(`${instance.baseUrl}/readyz`)).status, { timeout: 10_000, interval: 200 })
      .toBe(200);
    const created = await SocketClient.create(instance.wsUrl);
    cleanups.push(() => created.client.close());
    expect((await send(created.welcome.endpoint.url, { method: 'POST', body: 'back' })).status).toBe(200);
  }, 30_000);

  it('Redis restarts and loses its data: watchers learn their endpoint is gone, and no process crashes', async () => {
    const redis = await startRedisServer();
    const instance = await startInstance({ ...SHARED, REDIS_URL: redis.url, REDIS_PREFIX: prefix, LEASE_MS: '1500' });
    cleanups.push(async () => {
      await instance.stop();
      await restarted.stop();
    });
    const watcher = await SocketClient.create(instance.wsUrl);
    await redis.stop();
    const restarted = await startRedisServer(redis.port);
    await watcher.client.next('expired', 10_000);
    expect(await watcher.client.closed).toBe(4004);
    expect(instance.process.exitCode).toBeNull();
    await expect
      .poll(async () => (await send(`${instance.baseUrl}/readyz`)).status, { timeout: 10_000, interval: 200 })
      .toBe(200);
    const again = await SocketClient.create(instance.wsUrl);
    cleanups.push(() => again.client.close());
  }, 30_000);

  it('Redis slow: every call has a bounded timeout, and the answer is 503 rather than a hang', async () => {
    const redis = await startRedisServer();
    const instance = await startInstance({
      ...SHARED,
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: '300',
    });
    cleanups.push(async () => {
      await instance.stop();
      await redis.stop();
    });
    const watcher = await SocketClient.create(instance.wsUrl);
    cleanups.push(() => watcher.client.close());
    // Redis stops answering every other client for 2 s (CLIENT PAUSE, Redis 6.2+).
    const blocker = connectRedis(redis.url);
    await blocker.call('CLIENT', 'PAUSE', '2000', 'ALL');
    const started = Date.now();
    const answer = await send(watcher.welcome.endpoint.url, { method: 'POST', body: 'during the pause' });
    expect(answer.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1500);
    blocker.disconnect();
    await expect
      .poll(async () => (await send(watcher.welcome.endpoint.url, { method: 'POST', body: 'after' })).status, {
        timeout: 5000,
        interval: 100,
      })
      .toBe(200);
  }, 30_000);
});
