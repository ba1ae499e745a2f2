import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import * as scripts from '../../src/redis/scripts.js';
import { ensureCliBuilt, root } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { freePort, startInstance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { connectRedis, testPrefix } from '../helpers/redis.js';
import { isAppend, privateRedisRig } from '../helpers/redis-rig.js';

/**
 * The Redis tier under the faults real deployments see (issue 27), each on a private
 * redis-server: every test counts, against the store, what each watcher received, what each
 * sender was told, and which seqs were used.
 */
describe('Redis faults: nothing lost, nothing doubled, no seq given twice', () => {
  const { cleanups, redisServer, proxyTo, instance } = privateRedisRig();
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function watcher(wsUrl: string, endpoint?: { id: string; key: string }) {
    const client = await SocketClient.open(wsUrl);
    cleanups.push(() => client.close());
    client.send(endpoint ? { type: 'join', endpointId: endpoint.id, key: endpoint.key } : { type: 'create' });
    const welcome = await client.next('welcome', 5000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(client.messages)}`);
    });
    return { client, welcome };
  }
  /** Every seq the store holds for the endpoint, read through the API. */
  async function storedSeqs(baseUrl: string, id: string, key: string): Promise<number[]> {
    const answer = await send(`${baseUrl}/api/endpoints/${id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return (JSON.parse(answer.text) as { requests: CapturedRequest[] }).requests.map((request) => request.seq);
  }

  it('1: delivers every request stored after the subscriber connection was killed, though its channel had carried none', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const [a, b] = [await instance(redis.url, prefix), await instance(redis.url, prefix)];
    const { client, welcome } = await watcher(b.wsUrl);
    const admin = connectRedis(redis.url);
    cleanups.push(() => admin.quit());
    // Before the endpoint's channel has carried a single live request.
    expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThan(0);
    const told: number[] = [];
    for (let i = 0; i < 10; i++)
      told.push(
        (await send(welcome.endpoint.url.replace(b.baseUrl, a.baseUrl), { method: 'POST', body: `n${i}` })).status,
      );
    expect(told).toEqual(Array(10).fill(200));
    const received = await client.requests(10, 10_000);
    expect(received.map((request) => request.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(received.map((request) => request.body)).toEqual(Array.from({ length: 10 }, (_, i) => `n${i}`));
    expect(await storedSeqs(a.baseUrl, welcome.endpoint.id, welcome.endpoint.key)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    // And nothing twice.
    await send(welcome.endpoint.url, { method: 'POST', body: 'last' });
    expect((await client.requests(1, 5000))[0]?.seq).toBe(11);
  });

  it('2: stores a send once when the reply to its APPEND is lost and the capture is tried again', async () => {
    const redis = await redisServer();
    const proxy = await proxyTo(redis);
    const prefix = testPrefix();
    const s = await instance(proxy.url, prefix);
    const { client, welcome } = await watcher(s.wsUrl);
    // ioredis sends a script's text (EVAL) the first time on a connection, its SHA after.
    const dropped = proxy.dropReplyTo(isAppend);
    const answer = await send(welcome.endpoint.url, { method: 'POST', body: 'once' });
    await dropped;
    // The sender was told once; the store and the watcher hold it once.
    expect(answer.status).toBe(200);
    expect((await client.requests(1, 5000)).map((request) => [request.seq, request.body])).toEqual([[1, 'once']]);
    await send(welcome.endpoint.url, { method: 'POST', body: 'next' });
    expect((await client.requests(1, 5000)).map((request) => [request.seq, request.body])).toEqual([[2, 'next']]);
    expect(await storedSeqs(s.baseUrl, welcome.endpoint.id, welcome.endpoint.key)).toEqual([1, 2]);
  });

  it('3: never stores a request whose sender was answered 503 while Redis stalled, and bounds every wait', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const s = await instance(redis.url, prefix, { redisCommandTimeoutMs: 500 });
    const { client, welcome } = await watcher(s.wsUrl);
    redis.process().kill('SIGSTOP');
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const sent = performance.now();
        const answer = await send(welcome.endpoint.url, { method: 'POST', body: `r${i}` });
        return { body: `r${i}`, status: answer.status, ms: performance.now() - sent };
      }),
    );
    const unknown = await send(welcome.endpoint.url.replace(welcome.endpoint.id, 'no-such-endpoint'), {
      method: 'POST',
    });
    const stalledFor = performance.now() - started;
    // Held well past the timeout, then let go.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2000 - stalledFor)));
    redis.process().kill('SIGCONT');

    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(1500);
    expect([503, 404]).toContain(unknown.status);
    const refused = answers.filter((answer) => answer.status === 503).map((answer) => answer.body);
    const taken = answers.filter((answer) => answer.status === 200).map((answer) => answer.body);
    expect(refused.length + taken.length).toBe(40);
    expect(refused.length).toBeGreaterThan(0);
    // Once Redis is back, the store holds exactly the requests answered 200, each once, and
    // none answered 503; the watcher gets the same.
    await expect
      .poll(async () => (await send(welcome.endpoint.url, { method: 'POST', body: 'after' })).status, {
        timeout: 10_000,
      })
      .toBe(200);
    const stored = JSON.parse(
      (
        await send(`${s.baseUrl}/api/endpoints/${welcome.endpoint.id}/requests?afterSeq=0`, {
          headers: { authorization: `Bearer ${welcome.endpoint.key}` },
        })
      ).text,
    ) as { requests: CapturedRequest[] };
    const storedBodies = stored.requests.map((request) => request.body);
    expect(storedBodies.filter((body) => body !== 'after').sort()).toEqual([...taken].sort());
    expect(stored.requests.every((request) => request.answer.status === 200)).toBe(true);
    expect(stored.requests.map((request) => request.seq)).toEqual(stored.requests.map((_, i) => i + 1));
    const received = await client.requests(stored.requests.length, 10_000);
    expect(received.map((request) => request.body)).toEqual(storedBodies);
  });

  it('a capture has one deadline for all its Redis calls: two instances with rate limits on answer every sender within the command timeout while Redis stalls', async () => {
    const redis = await redisServer();
    const env = { REDIS_URL: redis.url, REDIS_PREFIX: testPrefix(), REDIS_COMMAND_TIMEOUT_MS: '1000' };
    const [a, b] = [await startInstance(env), await startInstance(env)];
    cleanups.push(
      () => a.kill(),
      () => b.kill(),
    );
    const { welcome } = await watcher(a.wsUrl);
    const viaB = welcome.endpoint.url.replace(a.baseUrl, b.baseUrl);
    // Known to both instances before the stall, as a busy endpoint would be.
    expect((await send(welcome.endpoint.url, { method: 'POST', body: 'warm' })).status).toBe(200);
    expect((await send(viaB, { method: 'POST', body: 'warm' })).status).toBe(200);
    redis.process().kill('SIGSTOP');
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const sent = performance.now();
        const answer = await send(i % 2 === 0 ? welcome.endpoint.url : viaB, { method: 'POST', body: `r${i}` });
        return { status: answer.status, ms: performance.now() - sent };
      }),
    );
    redis.process().kill('SIGCONT');
    // The command timeout once, plus room for two cores shared with other test files; before,
    // each of a capture's calls (rate limits, endpoint check, append) had its own.
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(1900);
    expect(answers.every((answer) => answer.status === 503)).toBe(true);
  });

  it('4: gives no seq twice after Redis restarts from an older snapshot, whichever instance captures first, and a page resuming past it changes nothing', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const [a, b] = [await instance(redis.url, prefix), await instance(redis.url, prefix)];
    const { client, welcome } = await watcher(b.wsUrl);
    const viaA = welcome.endpoint.url.replace(b.baseUrl, a.baseUrl);
    for (let i = 1; i <= 5; i++) await send(viaA, { method: 'POST', body: `old${i}` });
    const admin = connectRedis(redis.url);
    await admin.save();
    await admin.quit();
    for (let i = 6; i <= 10; i++) await send(viaA, { method: 'POST', body: `lost${i}` });
    expect((await client.requests(10, 10_000)).map((request) => request.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    // Redis loses requests 6-10: it restarts from the snapshot. The first capture after it goes
    // through B, which never captured on this endpoint (only its watcher saw 1-10).
    await redis.restart();
    await expect
      .poll(async () => (await send(welcome.endpoint.url, { method: 'POST', body: 'new1' })).status, {
        timeout: 15_000,
        interval: 200,
      })
      .toBe(200);
    await send(viaA, { method: 'POST', body: 'new2' });
    // The watcher gets both under seqs it has never seen, in order, and each seq is used once.
    const fresh = await client.requests(2, 10_000);
    expect(fresh.map((request) => request.body)).toEqual(['new1', 'new2']);
    expect(fresh[0]?.seq).toBeGreaterThan(10);
    expect(fresh[1]?.seq).toBe((fresh[0]?.seq ?? 0) + 1);
    // What Redis still holds keeps its seqs (each entry carries its own): the lost ones are a gap, and no history is deleted for it.
    const stored = await storedSeqs(a.baseUrl, welcome.endpoint.id, welcome.endpoint.key);
    expect(stored).toEqual([1, 2, 3, 4, 5, fresh[0]?.seq, fresh[1]?.seq]);

    // A page that claims more than was ever handed out resumes: welcomed with the real last seq,
    // never refused, and nothing stored changes for it (a read never changes state).
    const resumeAt = (fresh[1]?.seq ?? 0) + 5;
    const { client: page, welcome: resumed } = await SocketClient.join(
      b.wsUrl,
      welcome.endpoint.id,
      welcome.endpoint.key,
      resumeAt,
    );
    cleanups.push(() => page.close());
    expect([resumed.gap, resumed.lastSeq, resumed.backlog]).toEqual([false, fresh[1]?.seq, 0]);
    await send(viaA, { method: 'POST', body: 'new3' });
    expect((await page.requests(1, 5000))[0]?.seq).toBe((fresh[1]?.seq ?? 0) + 1);
    expect(await storedSeqs(a.baseUrl, welcome.endpoint.id, welcome.endpoint.key)).toEqual([
      1,
      2,
      3,
      4,
      5,
      fresh[0]?.seq,
      fresh[1]?.seq,
      (fresh[1]?.seq ?? 0) + 1,
    ]);
  });

  it('5: keeps serving when Redis is full: captures make room by evicting the oldest requests, and delete and clear still run', async () => {
    const redis = await redisServer(['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction']);
    const prefix = testPrefix();
    // A stored-bytes budget far above what Redis may hold: Redis's own limit is hit first.
    const s = await instance(redis.url, prefix, {
      maxStoredBytes: 256 * 1024 * 1024,
      maxStoredBytesPerEndpoint: 256 * 1024 * 1024,
      requestsPerEndpoint: 1000,
    });
    const { welcome } = await watcher(s.wsUrl);
    const other = await watcher(s.wsUrl);
    const body = 'x'.repeat(60 * 1024);
    const statuses: number[] = [];
    for (let i = 0; i < 250; i++) statuses.push((await send(welcome.endpoint.url, { method: 'POST', body })).status);
    const admin = connectRedis(redis.url);
    cleanups.push(() => admin.quit());
    // Redis was full: captures kept being answered 200, having evicted the oldest requests.
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(
      Number(/evicted_requests_total (\d+)/.exec((await send(`${s.baseUrl}/metrics`)).text)?.[1] ?? 0),
    ).toBeGreaterThan(0);
    // Over its limit outright (the limit lowered under what it holds): Redis refuses every
    // command that may grow memory. Clear and delete still run: they free before they write.
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
    await admin.config('SET', 'maxmemory', String(used - 2 * 1024 * 1024));
    expect(
      await admin.set(`${prefix}probe`, 'x').then(
        () => 'stored',
        (error: Error) => error.message,
      ),
    ).toMatch(/OOM/);
    const auth = { authorization: `Bearer ${other.welcome.endpoint.key}` };
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${other.welcome.endpoint.id}/requests`, {
          method: 'DELETE',
          headers: auth,
        })
      ).status,
    ).toBeLessThan(300);
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${welcome.endpoint.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${welcome.endpoint.key}` },
        })
      ).status,
    ).toBeLessThan(300);
  });

  it.skipIf(!existsSync('/usr/bin/faketime'))(
    '6: an instance whose clock runs 50 s ahead sweeps nothing another instance still watches',
    async () => {
      const redis = await redisServer();
      const prefix = testPrefix();
      const watching = await instance(redis.url, prefix, { graceMs: 1000, leaseMs: 3000 });
      const { welcome } = await watcher(watching.wsUrl);
      // The other instance runs as its own process under libfaketime, sweeping every second.
      const port = await freePort();
      const ahead = spawn('faketime', ['-f', '+50s', process.execPath, join(root, 'dist', 'main.js')], {
        env: {
          ...process.env,
          REDIS_URL: redis.url,
          REDIS_PREFIX: prefix,
          DATA_DIR: 'none',
          HOST: '127.0.0.1',
          PORT: String(port),
          LOG_LEVEL: 'warn',
          CLEANUP_INTERVAL_MS: '1000',
        },
        stdio: 'ignore',
        // Its own process group: faketime runs node as a child, which must go with it.
        detached: true,
      });
      cleanups.push(async () => {
        const exited = new Promise((resolve) => ahead.once('exit', resolve));
        process.kill(-(ahead.pid as number), 'SIGKILL');
        await exited;
      });
      await expect
        .poll(
          () =>
            fetch(`http://127.0.0.1:${port}/healthz`).then(
              (r) => r.ok,
              () => false,
            ),
          { timeout: 15_000, interval: 100 },
        )
        .toBe(true);
      // Its clock is ahead: its answers are dated 50 s from now.
      const dated = Date.parse((await fetch(`http://127.0.0.1:${port}/healthz`)).headers.get('date') ?? '');
      expect(dated - Date.now()).toBeGreaterThan(40_000);
      // Five sweeps by the instance ahead: the watched endpoint lives on, on both instances.
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect((await send(welcome.endpoint.url, { method: 'POST', body: `${i}` })).status).toBe(200);
        expect(
          (await send(welcome.endpoint.url.replace(watching.baseUrl, `http://127.0.0.1:${port}`), { method: 'POST' }))
            .status,
        ).toBe(200);
      }
    },
    30_000,
  );

  it('7: one set of limits for every instance (the latest started, which says so), and a lowered budget is reached a bounded batch at a time', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const big = await instance(redis.url, prefix, {
      requestsPerEndpoint: 1000,
      maxStoredBytes: 64 * 1024 * 1024,
      maxStoredBytesPerEndpoint: 64 * 1024 * 1024,
    });
    const { welcome } = await watcher(big.wsUrl);
    for (let i = 0; i < 600; i++) await send(welcome.endpoint.url, { method: 'POST', body: `${i}`.padEnd(1000, '.') });
    // A second instance with a far smaller budget starts: its limits now apply to every instance.
    const small = await instance(redis.url, prefix, {
      requestsPerEndpoint: 1000,
      maxStoredBytes: 200 * 1024,
      maxStoredBytesPerEndpoint: 200 * 1024,
    });
    await send(welcome.endpoint.url.replace(big.baseUrl, small.baseUrl), { method: 'POST', body: 'first after' });
    expect(small.warnings()).toMatch(/limits differ from those in Redis/);
    const evictedAfterOne = Number(
      /evicted_requests_total (\d+)/.exec((await send(`${small.baseUrl}/metrics`)).text)?.[1],
    );
    // One capture evicts at most a batch (the endpoint's own budget, then the store's), never all 400 at once.
    expect(evictedAfterOne).toBeLessThanOrEqual(2 * scripts.EVICT_BATCH);
    expect(evictedAfterOne).toBeGreaterThan(0);
    // Captures through the first instance follow the new limits too, and the rest goes over a few calls.
    for (let i = 0; i < 10; i++) await send(welcome.endpoint.url, { method: 'POST', body: 'more' });
    const stored = await storedSeqs(big.baseUrl, welcome.endpoint.id, welcome.endpoint.key);
    expect(stored.length).toBeLessThan(200);
    expect(stored.at(-1)).toBe(611);
  });

  it('8: announces watcher counts from the step that records them', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const [a, b] = [await instance(redis.url, prefix), await instance(redis.url, prefix)];
    const first = await watcher(a.wsUrl);
    await watcher(b.wsUrl, first.welcome.endpoint);
    await expect
      .poll(
        () =>
          first.client.messages
            .filter((message) => message.type === 'watchers')
            .map((message) => (message as { count: number }).count)
            .at(-1),
        { timeout: 5000 },
      )
      .toBe(2);
    // The count comes from the script that records it: MONITOR marks a script's commands `lua`,
    // and no instance publishes on its own.
    const admin = connectRedis(redis.url);
    const monitor = await admin.monitor();
    cleanups.push(
      async () => monitor.disconnect(),
      () => admin.quit(),
    );
    const publishes: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (/^s?publish$/i.test(args[0] ?? '')) publishes.push(source === 'lua' ? 'script' : 'client');
    });
    await watcher(a.wsUrl, first.welcome.endpoint);
    await expect
      .poll(
        () =>
          first.client.messages
            .filter((message) => message.type === 'watchers')
            .map((message) => (message as { count: number }).count)
            .at(-1),
        { timeout: 5000 },
      )
      .toBe(3);
    await send(first.welcome.endpoint.url, { method: 'POST' });
    await expect.poll(() => publishes.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    expect(publishes.filter((by) => by === 'client')).toEqual([]);
  });
});
