import { describe, expect, it } from 'vitest';
import { ONLY_DEFAULT } from '../../src/shared/answer-rules.js';
import { DEFAULT_RESPONSE } from '../../src/shared/schemas/response-config.js';
import { createRedisStore } from '../../src/redis/store.js';
import type { NewEntry } from '../../src/store/store.js';
import { capturedRequestOf, encodeRecord } from '../../src/store/stored-request.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { connectRedis, testPrefix } from '../helpers/redis.js';
import { type PrivateRedis } from '../helpers/redis-instance.js';
import { isAppend, privateRedisRig } from '../helpers/redis-rig.js';

/**
 * The request log on Redis (issue 32, "What breaks"), each defect on private redis-servers:
 * what each sender was told is counted against what the store holds.
 */
describe('the request log on Redis', () => {
  const { cleanups, redisServer, proxyTo, instance } = privateRedisRig();
  async function watcher(wsUrl: string) {
    const { client, welcome } = await SocketClient.create(wsUrl);
    cleanups.push(() => client.close());
    return { client, welcome };
  }
  const entryOf = (json: string): NewEntry => ({
    record: encodeRecord(json, new Uint8Array()),
    choices: ONLY_DEFAULT,
    answers: ['{"status":200,"delayMs":0,"by":"default"}'],
  });

  it('1: a cut connection with 60 captures in flight stores each exactly once, under the seq its caller was given', async () => {
    const redis = await redisServer();
    const proxy = await proxyTo(redis);
    const prefix = testPrefix();
    // A deadline of 5 s (the command timeout bounds it): time for the reconnect and the retries on a loaded CI machine.
    const s = await instance(proxy.url, prefix, { requestsPerEndpoint: 1000, redisCommandTimeoutMs: 5000 });
    const { welcome } = await watcher(s.wsUrl);
    const { id } = welcome.endpoint;
    expect((await s.store.appendRequest(id, 'live', () => entryOf('{"n":-1}'), Date.now()))?.seq).toBe(1);
    const dropped = proxy.dropReplyTo(isAppend);
    // All in one tick: one pipelined write, which Redis runs whole before the first reply is lost.
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, n) =>
        s.store.appendRequest(id, 'live', () => entryOf(`{"n":${n}}`), Date.now(), Date.now() + 5000),
      ),
    );
    await dropped;
    const log = await s.store.readLog(id, 1);
    const stored = (log?.requests ?? []).map((request) => [
      request.seq,
      (capturedRequestOf(request) as unknown as { n: number }).n,
    ]);
    const numbers = stored.map(([, n]) => n);
    expect(new Set(numbers).size).toBe(numbers.length);
    // Every caller given a seq finds its own capture under it; a caller told it failed finds none.
    const given = results.flatMap((result, n) => (result.status === 'fulfilled' ? [[result.value?.seq, n]] : []));
    expect(stored.filter(([, n]) => given.some(([, g]) => g === n))).toEqual(
      given.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0)),
    );
    expect(
      results
        .flatMap((result) =>
          result.status === 'rejected' ? [String((result.reason as Error).cause ?? result.reason)] : [],
        )
        .slice(0, 3),
    ).toEqual([]);
    expect(given.length).toBe(60);
  });

  it('1: after a cut, nothing in flight is sent again on its own: a capture is tried again only by its caller, within its deadline', async () => {
    const redis = await redisServer();
    const proxy = await proxyTo(redis);
    const prefix = testPrefix();
    const s = await instance(proxy.url, prefix, { redisCommandTimeoutMs: 1000 });
    const { welcome } = await watcher(s.wsUrl);
    const { id } = welcome.endpoint;
    expect((await s.store.appendRequest(id, 'live', () => entryOf('{"n":-1}'), Date.now()))?.seq).toBe(1);
    // Written by the instance, held at the proxy, then the connection cut: never run, never answered.
    proxy.pause();
    const results = Promise.allSettled(
      Array.from({ length: 20 }, (_, n) =>
        s.store.appendRequest(id, 'live', () => entryOf(`{"n":${n}}`), Date.now(), Date.now() + 1000),
      ),
    );
    await expect.poll(() => proxy.held(), { timeout: 2000 }).toBeGreaterThan(0);
    proxy.killAll();
    // Redis stays out of reach (new connections wait at the proxy) until every caller has given up.
    expect((await results).map((result) => result.status)).toEqual(Array.from({ length: 20 }, () => 'rejected'));
    const appends = proxy.countCommands(isAppend);
    proxy.resume();
    await expect
      .poll(
        async () =>
          (await s.store.appendRequest(id, 'live', () => entryOf('{"n":"after"}'), Date.now()).catch(() => undefined))
            ?.seq,
        { timeout: 10_000, interval: 100 },
      )
      .toBeGreaterThan(1);
    // Only the captures tried after Redis came back reached it: none of the 20 was sent again by the client.
    expect(appends()).toBeLessThanOrEqual(2);
    const log = await s.store.readLog(id, 0);
    expect(log?.requests.map((request) => (capturedRequestOf(request) as unknown as { n: unknown }).n)).toEqual([
      -1,
      'after',
    ]);
  });

  it('2: a capture whose reply comes after its caller gave up is settled: the record says the 503 its sender got, announced', async () => {
    const redis = await redisServer();
    const proxy = await proxyTo(redis);
    const prefix = testPrefix();
    const s = await instance(proxy.url, prefix, { redisCommandTimeoutMs: 1000 });
    const direct = await instance(redis.url, prefix);
    const { client, welcome } = await watcher(direct.wsUrl);
    const { id } = welcome.endpoint;
    expect((await s.store.appendRequest(id, 'live', () => entryOf('{"n":1}'), Date.now()))?.seq).toBe(1);
    // Held at the proxy, then let through to Redis alone: Redis runs it at once, and its reply is held.
    proxy.pause();
    const late = s.store.appendRequest(id, 'live', () => entryOf('{"n":2}'), Date.now(), Date.now() + 1000);
    await expect.poll(() => proxy.held(), { timeout: 2000 }).toBeGreaterThan(0);
    proxy.resume();
    proxy.pause();
    await expect(late).rejects.toThrow(/store unavailable/);
    proxy.resume();
    // Stored (Redis ran it in time), and its record now says what its sender got.
    const answered = await client.next('answered', 5000);
    expect(answered).toEqual({ type: 'answered', seq: 2, answer: { status: 503, delayMs: 0, by: 'error' } });
    const stored = (await direct.store.readLog(id, 1))?.requests.map(
      (request) => capturedRequestOf(request) as { seq: number; answer: unknown },
    );
    expect(stored?.map((record) => [record.seq, record.answer])).toEqual([
      [2, { status: 503, delayMs: 0, by: 'error' }],
    ]);
  });

  it("8: a local app's answer that comes before the sender's instance has subscribed still reaches the sender", async () => {
    const redis = await redisServer();
    const proxy = await proxyTo(redis);
    const prefix = testPrefix();
    // The sender's instance reaches Redis through the proxy; the responder's directly.
    const senders = await instance(proxy.url, prefix, { respondTimeoutMs: 3000 });
    const responders = await instance(redis.url, prefix);
    const { welcome } = await watcher(responders.wsUrl);
    const { client: responder } = await SocketClient.join(responders.wsUrl, welcome.endpoint.id, welcome.endpoint.key);
    cleanups.push(() => responder.close());
    responder.send({ type: 'claim-responder' });
    await responder.next('responder');
    await responder.next('responder');
    const viaSenders = welcome.endpoint.url.replace(responders.baseUrl, senders.baseUrl);
    // The sender's instance gets its capture's reply, then nothing more until the answer went by.
    const paused = proxy.pauseAfterReplyTo(isAppend);
    const answer = send(viaSenders, { method: 'POST', body: 'hello' });
    await paused;
    const { request } = await responder.next('request');
    const heard = connectRedis(redis.url);
    cleanups.push(() => heard.quit());
    responder.send({
      type: 'local-answer',
      seq: request.seq,
      status: 201,
      headers: [],
      body: 'from the local app',
      bodyEncoding: 'utf8',
    });
    // Published (and kept a moment) before the sender's instance could subscribe.
    await expect.poll(async () => (await heard.keys(`${prefix}*la:*`)).length, { timeout: 3000 }).toBe(1);
    proxy.resume();
    const got = await answer;
    expect([got.status, got.text]).toEqual([201, 'from the local app']);
  });

  it('3: one endpoint losing a write to a restart from an older snapshot costs the others nothing: their history stays, and its own too', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const s = await instance(redis.url, prefix);
    const [e1, e2] = [await watcher(s.wsUrl), await watcher(s.wsUrl)];
    for (let i = 1; i <= 5; i++) {
      await send(e1.welcome.endpoint.url, { method: 'POST', body: `e1-${i}` });
      await send(e2.welcome.endpoint.url, { method: 'POST', body: `e2-${i}` });
    }
    const admin = connectRedis(redis.url);
    await admin.save();
    await admin.quit();
    // e1's sixth request is lost with the restart; e2 lost nothing.
    await send(e1.welcome.endpoint.url, { method: 'POST', body: 'e1-lost' });
    await e1.client.requests(6, 5000);
    await redis.restart();
    await expect
      .poll(async () => (await send(e2.welcome.endpoint.url, { method: 'POST', body: 'e2-after' })).status, {
        timeout: 15_000,
        interval: 200,
      })
      .toBe(200);
    await send(e1.welcome.endpoint.url, { method: 'POST', body: 'e1-after' });
    const bodies = async (endpoint: { id: string; key: string }) =>
      (
        JSON.parse(
          (
            await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=0`, {
              headers: { authorization: `Bearer ${endpoint.key}` },
            })
          ).text,
        ) as { requests: Array<{ seq: number; body: string }> }
      ).requests;
    const second = await bodies(e2.welcome.endpoint);
    expect(second.map((request) => request.body)).toEqual(['e2-1', 'e2-2', 'e2-3', 'e2-4', 'e2-5', 'e2-after']);
    const first = await bodies(e1.welcome.endpoint);
    expect(first.map((request) => request.body)).toEqual(['e1-1', 'e1-2', 'e1-3', 'e1-4', 'e1-5', 'e1-after']);
    // Seq 6 was handed out before the loss: it is a gap now, never given again.
    expect(first.at(-1)?.seq).toBeGreaterThan(6);
  });

  it('4: with a replica wait, a primary that acknowledges writes no replica has is reported; one with min-replicas-to-write and no replica in sync refuses every write, so no sender is told 2xx', async () => {
    const draft = () => entryOf('{"n":1}');
    const open = async (redis: PrivateRedis) => {
      const connection = connectRedis(redis.url);
      cleanups.push(() => connection.quit());
      const warned: string[] = [];
      const store = createRedisStore({
        redis: connection,
        prefix: testPrefix(),
        commandTimeoutMs: 2000,
        replicaWaitMs: 500,
        requestsPerEndpoint: 50,
        maxStoredBytes: 1 << 26,
        maxStoredBytesPerEndpoint: 1 << 24,
        maxResponseConfigBytes: 1 << 26,
        onReplicationUnguarded: (found) => warned.push(found),
      });
      return { store, warned };
    };
    const endpoint = {
      id: 'e1',
      kind: 'live' as const,
      keyHash: 'ab'.repeat(32),
      createdAt: '2026-01-01T00:00:00.000Z',
      response: DEFAULT_RESPONSE,
    };
    const unguarded = await open(await redisServer());
    expect(await unguarded.store.createEndpoint(endpoint, { maxEndpoints: 10, deadlineMs: Date.now() + 60_000 })).toBe(
      'created',
    );
    expect(unguarded.warned).toEqual(['0']);
    expect((await unguarded.store.appendRequest('e1', 'live', draft, Date.now()))?.seq).toBe(1);

    // Guarded, with no replica in sync: Redis refuses the capture whole, and the sender is told 503.
    const guarded = await open(await redisServer(['--min-replicas-to-write', '1', '--min-replicas-max-lag', '10']));
    expect(
      await guarded.store
        .createEndpoint(endpoint, { maxEndpoints: 10, deadlineMs: Date.now() + 60_000 })
        .catch((error: Error) => error.message),
    ).toMatch(/NOREPLICAS/);
  });

  it('6: the limits come back after Redis restarts empty: REQUESTS_PER_ENDPOINT 5 stays 5', async () => {
    const redis = await redisServer();
    const prefix = testPrefix();
    const s = await instance(redis.url, prefix, { requestsPerEndpoint: 5 });
    const first = await watcher(s.wsUrl);
    await send(first.welcome.endpoint.url, { method: 'POST', body: 'before' });
    // Empty on restart: no snapshot was saved.
    await redis.restart();
    const after = await watcher(s.wsUrl).catch(async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return watcher(s.wsUrl);
    });
    for (let i = 0; i < 8; i++)
      expect((await send(after.welcome.endpoint.url, { method: 'POST', body: `n${i}` })).status).toBe(200);
    const answer = await send(`${s.baseUrl}/api/endpoints/${after.welcome.endpoint.id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${after.welcome.endpoint.key}` },
    });
    expect((JSON.parse(answer.text) as { requests: unknown[] }).requests).toHaveLength(5);
  });

  it('7: out of memory held by something else, a capture evicts no stored request', async () => {
    const redis = await redisServer(['--maxmemory', '16mb', '--maxmemory-policy', 'noeviction']);
    const prefix = testPrefix();
    const s = await instance(redis.url, prefix, { requestsPerEndpoint: 1000 });
    const { welcome } = await watcher(s.wsUrl);
    for (let i = 0; i < 30; i++)
      expect((await send(welcome.endpoint.url, { method: 'POST', body: `r${i}${'x'.repeat(1000)}` })).status).toBe(200);
    // Something else takes the rest of Redis's memory.
    const admin = connectRedis(redis.url);
    cleanups.push(() => admin.quit());
    // Filled to the brim: large values until Redis refuses one, then smaller ones; topped up
    // before each capture, as Redis may have freed a little meanwhile (client buffers).
    let filled = 0;
    const fill = async (sizes: number[]) => {
      for (const size of sizes) {
        for (let refusal = ''; refusal === ''; filled++)
          refusal = await admin.set(`other:${filled}`, 'y'.repeat(size)).then(
            () => '',
            (error: Error) => error.message,
          );
      }
    };
    await fill([256 * 1024, 16 * 1024, 1024, 64]);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      await fill([64]);
      statuses.push((await send(welcome.endpoint.url, { method: 'POST', body: 'one more' })).status);
    }
    expect(statuses).toContain(503);
    // Nothing stored was evicted for memory it does not hold.
    const answer = await send(`${s.baseUrl}/api/endpoints/${welcome.endpoint.id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${welcome.endpoint.key}` },
    });
    expect((JSON.parse(answer.text) as { requests: unknown[] }).requests).toHaveLength(
      30 + statuses.filter((status) => status === 200).length,
    );
  });
});
