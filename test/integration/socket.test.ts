import { connect } from 'node:net';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { tcpSocketOf } from '../../src/socket/frame.js';
import { FLUSH_AFTER_MESSAGES } from '../../src/socket/corking.js';
import { LIVE_PATH } from '../../src/shared/protocol.js';
import { SocketClient } from '../helpers/socket-client.js';
import { send, sendRaw } from '../helpers/http.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig } from '../../src/config.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { storeLimits, type Store } from '../../src/store/store.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('live protocol', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer(overrides);
    cleanups.push(started.close);
    return started;
  }
  function track<T extends { client: SocketClient }>(joined: T): T {
    cleanups.push(() => joined.client.close());
    return joined;
  }
  /**
   * A memory store that holds the log read of the next endpoint created after `holdNextCreate()`
   * until `release()`: its create or join is still running meanwhile.
   */
  function storeHoldingNewLogs() {
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    let release = () => undefined as void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let onCreated: (() => void) | undefined;
    let held: string | undefined;
    const store: Store = {
      ...memory,
      createEndpoint: async (endpoint, limits) => {
        if (onCreated) {
          held = endpoint.id;
          onCreated();
          onCreated = undefined;
        }
        return memory.createEndpoint(endpoint, limits);
      },
      readLog: async (id, after) => {
        if (id === held) await released;
        return memory.readLog(id, after);
      },
    };
    const holdNextCreate = () => new Promise<void>((resolve) => (onCreated = resolve));
    return { store, bus, holdNextCreate, release: () => release() };
  }

  it('creates an endpoint with an unguessable id and key, and the default response', async () => {
    const s = await server();
    const { welcome } = track(await SocketClient.create(s.wsUrl));
    expect(welcome.created).toBe(true);
    expect(welcome.endpoint.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(welcome.endpoint.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(welcome.endpoint.response).toEqual({
      status: 200,
      body: '{"ok":true}',
      contentType: 'application/json',
      headers: [],
      delayMs: 0,
    });
    expect(welcome.backlog).toBe(0);
  });

  it('delivers each request to every watcher, and a third watcher gets the backlog', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const b = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    expect(b.welcome.created).toBe(false);

    await send(a.welcome.endpoint.url, { method: 'POST', body: 'one' });
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'two' });
    const [fromA, fromB] = await Promise.all([a.client.requests(2), b.client.requests(2)]);
    expect(fromA.map((r) => r.body)).toEqual(['one', 'two']);
    expect(fromB).toEqual(fromA);

    const c = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    expect(c.welcome.backlog).toBe(2);
    expect(await c.client.requests(2)).toEqual(fromA);
  });

  it('flushes a busy turn after a few messages, but never with more writes than messages', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const endpointId = a.welcome.endpoint.id;
    const serverSockets = () => [...s.app.websocketServer.clients].map((socket) => tcpSocketOf(socket)!);
    // Publishing is synchronous on the memory bus, so everything below happens in one turn.
    const publish = (count: number) => {
      for (let i = 0; i < count; i++) void s.bus.publish(endpointId, { data: '{"type":"cleared","clearedSeq":0}' });
    };

    // One watcher: corked until FLUSH_AFTER_MESSAGES are queued, then written without waiting
    // for the turn to end.
    const [only] = serverSockets();
    publish(FLUSH_AFTER_MESSAGES - 1);
    expect(only?.writableCorked).toBe(1);
    publish(1);
    expect(only?.writableCorked).toBe(0);
    for (let i = 0; i < FLUSH_AFTER_MESSAGES; i++) await a.client.next('cleared');

    // More watchers than that: an early flush waits until it carries a message per socket.
    const watchers = FLUSH_AFTER_MESSAGES + 2;
    const others = [];
    for (let i = 1; i < watchers; i++)
      others.push(track(await SocketClient.join(s.wsUrl, endpointId, a.welcome.endpoint.key)));
    publish(watchers - 1);
    expect(serverSockets().map((socket) => socket.writableCorked)).toEqual(Array(watchers).fill(1));
    publish(1);
    expect(serverSockets().map((socket) => socket.writableCorked)).toEqual(Array(watchers).fill(0));
    for (const { client } of [a, ...others]) {
      for (let i = 0; i < watchers; i++) await client.next('cleared');
    }
  });

  it('refuses WebSocket upgrades to any other path, receiver URLs included, and captures none', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    // A client that keeps its side open is still cut once the answer is sent: the server holds
    // no socket for it afterwards.
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        s.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    const before = await connections();
    const raw = connect({ port: Number(new URL(s.baseUrl).port), host: '127.0.0.1', allowHalfOpen: true });
    cleanups.push(async () => void raw.destroy());
    raw.write(
      `GET ${new URL(a.welcome.endpoint.url).pathname} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    );
    let reply = '';
    raw.on('data', (chunk: Buffer) => (reply += chunk.toString()));
    await new Promise((resolve) => raw.once('end', resolve));
    expect(reply).toMatch(/^HTTP\/1.1 400 /);
    await expect.poll(connections).toBe(before);
    const receiver = a.welcome.endpoint.url.replace(/^http/, 'ws');
    for (const url of [receiver, `${receiver}/sub?x=1`, `${s.wsUrl}/`, `${s.wsUrl}/nowhere`]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const socket = new WebSocket(url, ['hookwatch.v1']);
        socket.on('open', () => reject(new Error(`${url} upgraded`)));
        socket.on('unexpected-response', (_request, response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        socket.on('error', () => {});
      });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'UPGRADE_NOT_SUPPORTED' } });
    }
    // The live path still upgrades, and the refused handshakes were not captured.
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'after' });
    const [first] = await a.client.requests(1);
    expect(first).toMatchObject({ seq: 1, body: 'after' });
  });

  it('refuses a wrong key exactly as an unknown endpoint', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    for (const [id, key] of [
      [a.welcome.endpoint.id, 'x'.repeat(32)],
      ['no-such-endpoint', a.welcome.endpoint.key],
    ] as const) {
      const intruder = await SocketClient.open(s.wsUrl);
      intruder.send({ type: 'join', endpointId: id, key });
      const error = await intruder.next('error');
      expect(error.error.code).toBe('ENDPOINT_NOT_FOUND');
      expect(await intruder.closed).toBe(4004);
    }
    // The real watcher is unaffected.
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'still here' });
    expect((await a.client.requests(1))[0]?.body).toBe('still here');
  });

  it('applies a response configuration to senders and tells every watcher', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const b = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    const response = { status: 201, body: 'created!', contentType: 'text/plain', headers: [], delayMs: 0 };
    a.client.send({ type: 'set-response', response });
    expect((await a.client.next('response')).response).toEqual(response);
    expect((await b.client.next('response')).response).toEqual(response);

    const answer = await send(a.welcome.endpoint.url, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(201);
    expect(answer.text).toBe('created!');
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.headers['x-hookwatch-response']).toBe('configured');

    a.client.send({
      type: 'set-response',
      response: { status: 204, body: 'ignored', contentType: 'application/json' },
    });
    await b.client.next('response');
    const empty = await send(a.welcome.endpoint.url, { method: 'POST' });
    expect(empty.status).toBe(204);
    expect(empty.body.length).toBe(0);

    const d = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    expect(d.welcome.endpoint.response.status).toBe(204);
  });

  it.each([
    [
      'a status outside the allowed ranges',
      { status: 302, body: '', contentType: 'text/plain' },
      /status must be in 200-299 or 400-599/,
    ],
    ['an unsafe content type', { status: 200, body: '', contentType: 'text/html' }, /contentType must be one of/],
    [
      'a body over 64 KiB',
      { status: 200, body: 'x'.repeat(70_000), contentType: 'text/plain' },
      /body must be at most 65536 bytes/,
    ],
    // 65,536 characters the old limit allowed, but 192 KiB of UTF-8: a clear error, not a 1009 close.
    [
      'a body of 64 Ki CJK characters',
      { status: 200, body: '漢'.repeat(65_536), contentType: 'text/plain' },
      /body must be at most 65536 bytes/,
    ],
    ['a denied header', { status: 200, headers: [['Set-Cookie', 'a=b']] }, /header Set-Cookie may not be configured/],
    ['a header value with a line break', { status: 200, headers: [['X-A', 'a\r\nX-B: c']] }, /X-A value must be/],
    [
      'eleven headers',
      { status: 200, headers: Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v']) },
      /at most 10 headers/,
    ],
    ['a delay over 30 s', { status: 200, delayMs: 30_001 }, /delayMs must be at most 30000/],
    ['a 1xx status', { status: 101 }, /status must be in 200-299 or 400-599/],
    ['an unknown field', { status: 200, extra: true }, /Unrecognized key/],
    ['a non-object', 'not an object', /expected object/],
  ])('rejects %s in a response configuration with a clear error', async (_label, response, message) => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    a.client.send({ type: 'set-response', response });
    const error = await a.client.next('error');
    expect(error.error.code).toBe('INVALID_RESPONSE_CONFIG');
    expect(error.error.message).toMatch(message);
    expect(error.for).toBe('set-response');
    const answer = await send(a.welcome.endpoint.url, { method: 'POST' });
    expect(answer.status).toBe(200);
  });

  it('sends configured headers as given: in order, with their case, a repeated name once per pair', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const headers = [
      ['X-Multi', 'one'],
      ['X-Multi', 'two'],
      ['X-Realm', 'Basic'],
      ['x-realm', 'Bearer realm="x"'],
    ];
    a.client.send({
      type: 'set-response',
      response: { status: 401, body: '', contentType: 'text/plain', headers, delayMs: 0 },
    });
    await a.client.next('response');
    const path = new URL(a.welcome.endpoint.url).pathname;
    const answer = await sendRaw(
      s.baseUrl,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 401 /);
    expect(answer).toContain('\r\nX-Multi: one\r\nX-Multi: two\r\nX-Realm: Basic\r\nx-realm: Bearer realm="x"\r\n');
  });

  it("passes a forwarder's result on to every watcher, and only from a socket that joined", async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const b = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    const result = {
      type: 'forwarded',
      seq: 1,
      target: 'http://localhost:3000/hook',
      status: 201,
      durationMs: 12.5,
      headers: [['Content-Type', 'text/plain']],
      body: 'ok',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    };
    b.client.send(result);
    expect(await a.client.next('forwarded')).toEqual(result);
    expect(await b.client.next('forwarded')).toEqual(result);

    const stranger = track({ client: await SocketClient.open(s.wsUrl) });
    stranger.client.send(result);
    expect((await stranger.client.next('error')).error.code).toBe('NOT_JOINED');
    b.client.send({ ...result, headers: Array.from({ length: 65 }, () => ['a', 'b']) });
    expect((await b.client.next('error')).error.code).toBe('BAD_MESSAGE');

    // A forwarder's burst within its rate (each report costs a tenth of a message) arrives in one
    // read and waits its turn; none of it is refused.
    for (let seq = 1; seq <= 300; seq++) b.client.send({ ...result, seq });
    for (let seq = 1; seq <= 300; seq++) expect((await a.client.next('forwarded')).seq).toBe(seq);
    expect(b.client.messages.filter((message) => message.type === 'error')).toEqual([]);
    expect(b.client.closeCode).toBeUndefined();
  });

  it('clears the log for every watcher and for later joiners', async () => {
    const s = await server();
    const a = track(await SocketClient.create(s.wsUrl));
    const b = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'old' });
    await Promise.all([a.client.requests(1), b.client.requests(1)]);
    a.client.send({ type: 'clear' });
    expect((await a.client.next('cleared')).clearedSeq).toBe(1);
    expect((await b.client.next('cleared')).clearedSeq).toBe(1);
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'new' });
    expect((await b.client.requests(1))[0]).toMatchObject({ seq: 2, body: 'new' });

    const c = track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    expect(c.welcome).toMatchObject({ backlog: 1, clearedSeq: 1, gap: false });
    expect((await c.client.requests(1))[0]?.body).toBe('new');
  });

  it('resumes after a reconnect with no gap and no repeat', async () => {
    const s = await server({ graceMs: 5_000 });
    const a = track(await SocketClient.create(s.wsUrl));
    const { id, key, url } = a.welcome.endpoint;
    const keeper = track(await SocketClient.join(s.wsUrl, id, key));
    for (let i = 1; i <= 3; i++) await send(url, { method: 'POST', body: `r${i}` });
    const seen = await a.client.requests(3);
    await a.client.close();

    // Requests that arrive while the watcher is away, and while it is rejoining.
    for (let i = 4; i <= 6; i++) await send(url, { method: 'POST', body: `r${i}` });
    const rejoin = await SocketClient.open(s.wsUrl);
    cleanups.push(() => rejoin.close());
    rejoin.send({ type: 'join', endpointId: id, key, afterSeq: seen.at(-1)?.seq ?? 0 });
    const during = Promise.all([7, 8].map((i) => send(url, { method: 'POST', body: `r${i}` })));
    const welcome = await rejoin.next('welcome');
    expect(welcome.gap).toBe(false);
    await during;
    const resumed = await rejoin.requests(5);
    expect(resumed.map((r) => r.seq)).toEqual([4, 5, 6, 7, 8]);
    await expect(rejoin.next('request', 300)).rejects.toThrow(/no 'request'/);
    await keeper.client.requests(8);
  });

  it('purges the endpoint after the last watcher leaves and the grace passes', async () => {
    const s = await server({ graceMs: 200 });
    const a = track(await SocketClient.create(s.wsUrl));
    const { id, key, url } = a.welcome.endpoint;
    await a.client.close();
    // Within the grace the endpoint still captures and can be rejoined.
    expect((await send(url, { method: 'POST', body: 'in grace' })).status).toBe(200);

    await expect
      .poll(async () => (await send(url, { method: 'POST' })).status, { timeout: 3000, interval: 50 })
      .toBe(404);
    expect(await s.store.getEndpoint(id)).toBeUndefined();
    const late = await SocketClient.open(s.wsUrl);
    late.send({ type: 'join', endpointId: id, key });
    expect((await late.next('error')).error.code).toBe('ENDPOINT_NOT_FOUND');
  });

  it('keeps the endpoint when a watcher rejoins within the grace', async () => {
    const s = await server({ graceMs: 300 });
    const a = track(await SocketClient.create(s.wsUrl));
    const { id, key, url } = a.welcome.endpoint;
    await a.client.close();
    const b = track(await SocketClient.join(s.wsUrl, id, key));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await send(url, { method: 'POST', body: 'kept' })).status).toBe(200);
    expect((await b.client.requests(1))[0]?.body).toBe('kept');
  });

  it('purges at once with a grace of 0', async () => {
    const s = await server({ graceMs: 0 });
    const a = await SocketClient.create(s.wsUrl);
    await a.client.close();
    await expect
      .poll(async () => (await send(a.welcome.endpoint.url)).status, { timeout: 2000, interval: 20 })
      .toBe(404);
  });

  it('makes a new URL by creating a new endpoint and leaving the old one', async () => {
    const s = await server({ graceMs: 100 });
    const old = await SocketClient.create(s.wsUrl);
    const fresh = track(await SocketClient.create(s.wsUrl));
    await old.client.close();
    expect(fresh.welcome.endpoint.id).not.toBe(old.welcome.endpoint.id);
    await expect
      .poll(async () => (await send(old.welcome.endpoint.url)).status, { timeout: 3000, interval: 50 })
      .toBe(404);
    expect((await send(fresh.welcome.endpoint.url)).status).toBe(200);
  });

  it('answers malformed messages with an error and keeps the socket', async () => {
    const s = await server();
    const client = await SocketClient.open(s.wsUrl);
    cleanups.push(() => client.close());
    client.socket.send('not json');
    expect((await client.next('error')).error.code).toBe('BAD_MESSAGE');
    client.send({ type: 'launch' });
    expect((await client.next('error')).error.code).toBe('BAD_MESSAGE');
    client.send({ type: 'clear' });
    expect((await client.next('error')).error.code).toBe('NOT_JOINED');
    client.send({ type: 'create' });
    await client.next('welcome');
    client.send({ type: 'create' });
    expect((await client.next('error')).error.code).toBe('ALREADY_JOINED');
  });

  it("handles one socket's messages in the order sent, without waiting for each answer", async () => {
    const s = await server();
    // A set-response sent straight after create applies to the new endpoint.
    const creator = await SocketClient.open(s.wsUrl);
    cleanups.push(() => creator.close());
    creator.send({ type: 'create' });
    creator.send({
      type: 'set-response',
      response: { status: 202, headers: [], body: '', contentType: 'text/plain', delayMs: 0 },
    });
    const { endpoint } = await creator.next('welcome');
    expect((await creator.next('response')).response.status).toBe(202);
    expect((await send(endpoint.url, { method: 'POST' })).status).toBe(202);
    expect(creator.messages.filter((message) => message.type === 'error')).toEqual([]);

    // A join refused for its afterSeq leaves the socket free for the corrected join sent after it.
    const joiner = await SocketClient.open(s.wsUrl);
    cleanups.push(() => joiner.close());
    joiner.send({ type: 'join', endpointId: endpoint.id, key: endpoint.key, afterSeq: -1 });
    joiner.send({ type: 'join', endpointId: endpoint.id, key: endpoint.key });
    expect((await joiner.next('error')).error.code).toBe('BAD_MESSAGE');
    expect((await joiner.next('welcome')).backlog).toBe(1);
    expect(joiner.messages.filter((message) => message.type === 'error')).toEqual([]);
  });

  it('gives a socket 10 s to start a create or join (4000), counting a refused join as none, but not cutting one in progress', async () => {
    // A store whose reads of new endpoints' logs wait for the test: a create sent in time is
    // still running when its socket's 10 s are up.
    const { store: slow, bus, holdNextCreate, release } = storeHoldingNewLogs();
    const started = await startServer({}, { store: slow, bus });
    cleanups.push(started.close);
    const { welcome } = track(await SocketClient.create(started.wsUrl));

    const creating = await SocketClient.open(started.wsUrl);
    cleanups.push(() => creating.close());
    const opened = Date.now();
    const refused = await SocketClient.open(started.wsUrl);
    cleanups.push(() => refused.close());
    const created = holdNextCreate();
    creating.send({ type: 'create' });
    await created;
    refused.send({ type: 'join', endpointId: welcome.endpoint.id, key: welcome.endpoint.key, afterSeq: -1 });
    expect((await refused.next('error')).error.code).toBe('BAD_MESSAGE');

    // The refused socket is closed 10 s after it opened; the creating one, opened first, is not.
    expect(await refused.closed).toBe(4000);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(9_900);
    release();
    expect((await creating.next('welcome')).created).toBe(true);
    expect(creating.closeCode).toBeUndefined();
    expect(started.app.hub.watcherTotal()).toBe(2);
  }, 20_000);

  it('leaves no watcher behind for a socket that closes while its create is still reading', async () => {
    const { store, bus, holdNextCreate, release } = storeHoldingNewLogs();
    const started = await startServer({}, { store, bus });
    cleanups.push(started.close);
    const leaving = await SocketClient.open(started.wsUrl);
    const created = holdNextCreate();
    leaving.send({ type: 'create' });
    await created;
    await leaving.close();
    await expect.poll(() => started.app.hub.watcherTotal()).toBe(1);
    release();
    await expect.poll(() => started.app.hub.watcherTotal()).toBe(0);
    expect(started.app.hub.channelCount()).toBe(0);
  });

  it('closes a socket whose messages pile up behind a store that does not answer (1013), instead of queueing them without bound', async () => {
    const bus = createMemoryBus();
    const memory = createMemoryStore({ ...storeLimits(defaultConfig()), bus });
    // A store whose configuration writes never finish.
    const stuck: Store = { ...memory, setResponse: () => new Promise<'set'>(() => undefined) };
    const started = await startServer({}, { store: stuck, bus });
    cleanups.push(started.close);
    const a = track(await SocketClient.create(started.wsUrl));
    // Five rules of 60 KB each: 20 such messages are twice what a socket may have waiting.
    const rule = { answer: { body: 'x'.repeat(60_000) } };
    const response = { status: 200, body: '', contentType: 'text/plain', rules: [rule, rule, rule, rule, rule] };
    for (let i = 0; i < 20; i++) a.client.send({ type: 'set-response', response });
    expect((await a.client.next('error')).error.code).toBe('STORE_UNAVAILABLE');
    expect(await a.client.closed).toBe(1013);
  });

  it('refuses a socket without the hookwatch.v1 subprotocol', async () => {
    const s = await server();
    const socket = new WebSocket(`${s.wsUrl}${LIVE_PATH}`);
    const code = await new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
    expect(code).toBe(1002);
  });

  it('enforces the watcher cap per endpoint', async () => {
    const s = await server({ maxWatchersPerEndpoint: 2 });
    const a = track(await SocketClient.create(s.wsUrl));
    track(await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key));
    const third = await SocketClient.open(s.wsUrl);
    third.send({ type: 'join', endpointId: a.welcome.endpoint.id, key: a.welcome.endpoint.key });
    expect((await third.next('error')).error.code).toBe('TOO_MANY_WATCHERS');
    expect(await third.closed).toBe(4503);
  });

  it('refuses new endpoints past the cap with AT_CAPACITY', async () => {
    const s = await server({ maxEndpoints: 1 });
    track(await SocketClient.create(s.wsUrl));
    const second = await SocketClient.open(s.wsUrl);
    second.send({ type: 'create' });
    expect((await second.next('error')).error.code).toBe('AT_CAPACITY');
    expect(await second.closed).toBe(4503);
  });

  it('tells watchers the server is going away (1001) on shutdown', async () => {
    const s = await startServer();
    const a = await SocketClient.create(s.wsUrl);
    await s.close();
    expect(await a.client.closed).toBe(1001);
  });

  it('terminates a watcher that stops answering heartbeats', async () => {
    const s = await server({ heartbeatMs: 1000 });
    const a = track(await SocketClient.create(s.wsUrl));
    const silent = await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key);
    expect(s.app.hub.watcherCount(a.welcome.endpoint.id)).toBe(2);
    // A vanished peer: it never reads the ping, so it never pongs.
    (silent.client.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    await expect.poll(() => s.app.hub.watcherCount(a.welcome.endpoint.id), { timeout: 5000, interval: 100 }).toBe(1);
    // The live one answered every ping and is still there.
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'alive' });
    expect((await a.client.requests(1))[0]?.body).toBe('alive');
  });

  it('disconnects a watcher that stops reading instead of buffering without bound', async () => {
    const s = await server({ maxSocketBufferBytes: 64 * 1024, maxBodyBytes: 256 * 1024 });
    const a = track(await SocketClient.create(s.wsUrl));
    const slow = await SocketClient.join(s.wsUrl, a.welcome.endpoint.id, a.welcome.endpoint.key);
    // Stop reading at the TCP level: the server's send buffer for this socket fills up.
    (slow.client.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = 'x'.repeat(200 * 1024);
    for (let i = 0; i < 40 && slow.client.closeCode === undefined; i++) {
      await send(a.welcome.endpoint.url, { method: 'POST', body: big });
      if (s.app.hub.watcherCount(a.welcome.endpoint.id) === 1) break;
    }
    await expect.poll(() => s.app.hub.watcherCount(a.welcome.endpoint.id), { timeout: 5000 }).toBe(1);
    expect(s.logs()).toContain('slow watcher disconnected');
    // The reading watcher kept everything.
    await send(a.welcome.endpoint.url, { method: 'POST', body: 'after' });
    const all = a.client.messages.filter((m) => m.type === 'request');
    expect(all.length).toBeGreaterThan(0);
  });
});
