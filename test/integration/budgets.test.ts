import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { StoreUnavailableError, storeLimits, type Store } from '../../src/store/store.js';
import { defaultConfig } from '../../src/config.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

const MIB = 1024 * 1024;

/** Issue #22: what no sender or reader may pin, and what no socket may dodge. */
describe('budgets: what one client or endpoint may hold', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function server(
    overrides: Parameters<typeof startServer>[0] = {},
    deps: Parameters<typeof startServer>[1] = {},
  ): Promise<TestServer> {
    const started = await startServer({ logLevel: 'warn', ...overrides }, deps);
    cleanups.push(started.close);
    return started;
  }
  async function kept(s: TestServer): Promise<{ id: string; key: string; url: string }> {
    const created = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    expect(created.status).toBe(201);
    return JSON.parse(created.text) as { id: string; key: string; url: string };
  }
  const bearer = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  it('pages the polling answer, so one poll never holds every stored byte', async () => {
    const s = await server({ maxStoredBytesPerEndpoint: 64 * MIB, maxStoredBytes: 128 * MIB });
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    const body = Buffer.alloc(MIB, 'a');
    for (let i = 0; i < 10; i++) expect((await send(welcome.endpoint.url, { method: 'POST', body })).status).toBe(200);

    const seqs: number[] = [];
    let afterSeq = 0;
    let pages = 0;
    for (;;) {
      const answer = await send(`${s.baseUrl}/api/endpoints/${welcome.endpoint.id}/requests?afterSeq=${afterSeq}`, {
        headers: bearer(welcome.endpoint.key),
      });
      expect(answer.status).toBe(200);
      expect(answer.body.length).toBeLessThan(5 * MIB);
      const page = JSON.parse(answer.text) as { more: boolean; gap: boolean; requests: Array<{ seq: number }> };
      expect(page.gap).toBe(false);
      pages++;
      for (const request of page.requests) seqs.push(request.seq);
      afterSeq = seqs.at(-1) ?? afterSeq;
      if (!page.more) break;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('counts response configurations in a budget of their own, and frees it when the endpoint goes', async () => {
    const s = await server({ maxResponseConfigBytes: MIB, keptCreatesPerAddress: 0 });
    const response = { status: 200, body: 'x'.repeat(64 * 1024), contentType: 'text/plain' };
    const endpoints = [];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const endpoint = await kept(s);
      endpoints.push(endpoint);
      const answer = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/response`, {
        method: 'PUT',
        headers: bearer(endpoint.key),
        body: JSON.stringify(response),
      });
      statuses.push(answer.status);
      if (answer.status !== 200) expect(JSON.parse(answer.text).error.code).toBe('AT_CAPACITY');
    }
    // Each costs about 130 KiB (twice its JSON, plus 1 KiB): 7 fit in 1 MiB.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 503]);
    const metrics = (await send(`${s.baseUrl}/metrics`)).text;
    expect(Number(/^hookwatch_response_config_bytes (\d+)/m.exec(metrics)?.[1])).toBeLessThanOrEqual(MIB);

    const first = endpoints[0] as { id: string; key: string };
    expect(
      (await send(`${s.baseUrl}/api/endpoints/${first.id}`, { method: 'DELETE', headers: bearer(first.key) })).status,
    ).toBe(204);
    const last = endpoints[7] as { id: string; key: string };
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${last.id}/response`, {
          method: 'PUT',
          headers: bearer(last.key),
          body: JSON.stringify(response),
        })
      ).status,
    ).toBe(200);
  });

  it('refuses an answer body that JSON escaping would grow past twice the body cap', async () => {
    const s = await server();
    const endpoint = await kept(s);
    const response = { status: 200, body: '\u0001'.repeat(64 * 1024), contentType: 'text/plain' };
    const answer = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/response`, {
      method: 'PUT',
      headers: bearer(endpoint.key),
      body: JSON.stringify(response),
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('once JSON-escaped');
  });

  it('counts kept endpoints made over the socket and over the API in one per-address limit', async () => {
    const s = await server({ keptCreatesPerAddress: 3 });
    await kept(s);
    await kept(s);
    const first = await SocketClient.open(s.wsUrl);
    cleanups.push(() => first.close());
    first.send({ type: 'create', kind: 'kept' });
    expect((await first.next('welcome')).endpoint.kind).toBe('kept');
    const second = await SocketClient.open(s.wsUrl);
    cleanups.push(() => second.close());
    second.send({ type: 'create', kind: 'kept' });
    expect((await second.next('error')).error.code).toBe('RATE_LIMITED');
    expect(await second.closed).toBe(4029);
    const api = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    expect(api.status).toBe(429);
    // Live endpoints stay bounded by the sockets that hold them, not by this count.
    const live = await SocketClient.create(s.wsUrl);
    cleanups.push(() => live.client.close());
    expect(live.welcome.endpoint.kind).toBe('live');
  });

  it('charges a message by its parsed type: a set-response dressed as a forwarder report is not cheap', async () => {
    const s = await server({ liveMessagesPerSecond: 20 });
    const { client } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    const disguised = `{"type":"forwarded","type":"set-response","response":{"status":200,"body":"${'x'.repeat(1000)}"}}`;
    for (let i = 0; i < 200; i++) client.socket.send(disguised);
    expect(await client.closed).toBe(4029);
    expect(
      client.messages.some((message) => message.type === 'error' && message.error.code === 'TOO_MANY_MESSAGES'),
    ).toBe(true);
    const changed = client.messages.filter((message) => message.type === 'response').length;
    expect(changed).toBeLessThanOrEqual(41);
  });

  it('still lets a forwarder report ten times the rate of other messages', async () => {
    const s = await server({ liveMessagesPerSecond: 20 });
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    await send(welcome.endpoint.url, { method: 'POST', body: 'x' });
    const report = {
      type: 'forwarded',
      seq: 1,
      target: 'http://localhost:3000/',
      status: 200,
      durationMs: 1,
      headers: [],
      body: '',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    } as const;
    for (let i = 0; i < 300; i++) client.send(report);
    await expect
      .poll(() => client.messages.filter((message) => message.type === 'forwarded').length, { timeout: 5000 })
      .toBe(300);
    expect(client.closeCode).toBeUndefined();
  });

  it("redacts the local app's answer relayed on a kept endpoint, as its requests are", async () => {
    const s = await server();
    const endpoint = await kept(s);
    const forwarder = await SocketClient.open(s.wsUrl);
    cleanups.push(() => forwarder.close());
    forwarder.send({ type: 'join', endpointId: endpoint.id, key: endpoint.key });
    await forwarder.next('welcome');
    expect((await send(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(200);
    forwarder.send({
      type: 'forwarded',
      seq: 1,
      target: 'http://localhost:3000/',
      status: 200,
      durationMs: 3,
      headers: [
        ['Set-Cookie', 'session=s3cret'],
        ['X-Auth-Token', 'tok3n'],
        ['Content-Type', 'text/plain'],
      ],
      body: 'ok',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    });
    const relayed = await forwarder.next('forwarded');
    expect(relayed.headers).toEqual([
      ['Set-Cookie', '[redacted]'],
      ['X-Auth-Token', '[redacted]'],
      ['Content-Type', 'text/plain'],
    ]);
  });

  it('detaches a joining watcher when the store fails during its join, so the endpoint can still expire', async () => {
    const config = defaultConfig({ graceMs: 200 });
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(config), bus });
    let failNextRead = false;
    const store: Store = {
      ...memory,
      readLog: (id, afterSeq) => {
        if (!failNextRead) return memory.readLog(id, afterSeq);
        failNextRead = false;
        return Promise.reject(new StoreUnavailableError(new Error('timed out')));
      },
    };
    const s = await server({ graceMs: 200 }, { store, bus });
    const owner = await SocketClient.create(s.wsUrl);
    const { id, key } = owner.welcome.endpoint;
    failNextRead = true;
    const joiner = await SocketClient.open(s.wsUrl);
    cleanups.push(() => joiner.close());
    joiner.send({ type: 'join', endpointId: id, key });
    expect((await joiner.next('error')).error.code).toBe('STORE_UNAVAILABLE');
    expect(await joiner.closed).toBe(1013);
    await owner.client.close();
    // No watcher left anywhere: the endpoint dies a grace after its last real watcher left.
    await expect.poll(() => s.app.hub.watcherTotal(), { timeout: 2000 }).toBe(0);
    await expect.poll(async () => (await s.store.getEndpoint(id)) === undefined, { timeout: 5000 }).toBe(true);
  });
});
