import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startCli, type CliRun } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { startInstance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { redisUrl, testPrefix } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** The configured answer of every endpoint here, to tell it from the local app's. */
const CONFIGURED = { status: 200, body: 'configured', contentType: 'text/plain' };

describe('hookwatch forward --respond: the local app answers senders', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer(overrides);
    cleanups.push(started.close);
    return started;
  }
  /** A local app on a free port; `handle` answers each request. */
  async function localApp(handle: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void) {
    const app = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => handle(request, Buffer.concat(chunks), response));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => app.close(resolve)));
    app.closeAllConnections();
    return `http://127.0.0.1:${(app.address() as { port: number }).port}/hook`;
  }
  /** A live endpoint watched by a test client (a tab), with the configured answer set. */
  async function endpoint(wsUrl: string, baseUrl: string) {
    const { client, welcome } = await SocketClient.create(wsUrl);
    cleanups.push(() => client.close());
    client.send({ type: 'set-response', response: CONFIGURED });
    await client.next('response');
    const { id, key } = welcome.endpoint;
    return { tab: client, id, key, url: welcome.endpoint.url, link: `${baseUrl}/#${id}.${key}` };
  }
  function cli(args: string[]): CliRun {
    const run = startCli(args);
    cleanups.push(() => run.stop('SIGKILL'));
    return run;
  }
  const responding = (run: CliRun) => run.waitFor('stderr', /answering the endpoint's senders/);

  it("gives the sender exactly what the local app answered, and records it as the forwarder's", async () => {
    const s = await server();
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const body = Buffer.from([0, 1, 2, 250, 251, 252, 0x7b]);
    const to = await localApp((_request, received, response) => {
      response.writeHead(
        201,
        [
          ['Content-Type', 'application/octet-stream'],
          ['X-App', 'mine'],
          ['X-App', 'twice'],
          ['Set-Cookie', 'session=1'],
          ['Location', '/elsewhere'],
          ['X-Echo-Length', String(received.length)],
        ].flat(),
      );
      response.end(body);
    });
    const run = cli(['forward', e.link, '--to', to, '--respond']);
    await responding(run);
    const claimed = (await e.tab.next('responder')).id;
    expect(claimed).toEqual(expect.any(String));
    // A tab that joins later learns it from its welcome.
    const { client: later, welcome: laterWelcome } = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => later.close());
    expect(laterWelcome.endpoint.responder).toBe(claimed);

    const answer = await send(`${e.url}/path?x=1`, { method: 'POST', body: 'hello' });
    expect(answer.status).toBe(201);
    expect(answer.body.equals(body)).toBe(true);
    expect(answer.headers['x-hookwatch-response']).toBe('forwarded');
    expect(answer.headers['content-type']).toBe('application/octet-stream');
    expect(answer.headers['x-app']).toBe('mine, twice');
    expect(answer.headers['x-echo-length']).toBe('5');
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.headers.location).toBeUndefined();
    // Our own safety headers are still there.
    expect(answer.headers['content-security-policy']).toBe("sandbox; default-src 'none'");

    const answered = await e.tab.next('answered');
    expect(answered.seq).toBe(1);
    expect(answered.answer).toMatchObject({
      status: 201,
      by: 'forwarder',
      droppedHeaders: expect.arrayContaining(['set-cookie', 'location']) as unknown,
    });
    const stored = JSON.parse(
      (
        await send(`${s.baseUrl}/api/endpoints/${e.id}/requests?afterSeq=0`, {
          headers: { authorization: `Bearer ${e.key}` },
        })
      ).text,
    ) as { requests: Array<{ answer: unknown }> };
    expect(stored.requests[0]?.answer).toEqual(answered.answer);
  });

  it('gives the configured answer with no responder, past the timeout, and at once when the CLI dies', async () => {
    const s = await server({ respondTimeoutMs: 800 });
    const e = await endpoint(s.wsUrl, s.baseUrl);
    expect((await send(e.url, { method: 'POST' })).text).toBe('configured');

    let hold = true;
    const to = await localApp((_request, _body, response) => {
      if (hold) setTimeout(() => response.end('late'), 1000).unref();
      else response.end('mine');
    });
    const run = cli(['forward', e.link, '--to', to, '--respond']);
    await responding(run);
    const started = performance.now();
    const slow = await send(e.url, { method: 'POST' });
    const waited = performance.now() - started;
    expect(slow.text).toBe('configured');
    expect(slow.headers['x-hookwatch-response']).toBe('configured');
    expect(waited).toBeGreaterThanOrEqual(700);
    expect(waited).toBeLessThan(2500);

    hold = false;
    // One request at a time: the late answer goes first.
    await run.waitFor('stdout', /#2 POST/);
    expect((await send(e.url, { method: 'POST' })).text).toBe('mine');

    // A CLI killed outright: its socket closes and its claim is given back.
    await run.stop('SIGKILL');
    await e.tab
      .next('responder', 5000)
      .then(async (message) => (message.id === null ? message : e.tab.next('responder', 5000)));
    const afterDeath = performance.now();
    expect((await send(e.url, { method: 'POST' })).text).toBe('configured');
    expect(performance.now() - afterDeath).toBeLessThan(700);
  });

  it('lets the latest --respond win and tells the one before, which answers again when the latest stops', async () => {
    const s = await server();
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const first = cli([
      'forward',
      e.link,
      '--to',
      await localApp((_q, _b, response) => response.end('first')),
      '--respond',
    ]);
    await responding(first);
    const second = cli([
      'forward',
      e.link,
      '--to',
      await localApp((_q, _b, response) => response.end('second')),
      '--respond',
    ]);
    await responding(second);
    await first.waitFor('stderr', /another hookwatch forward --respond took over/);
    expect((await send(e.url, { method: 'POST' })).text).toBe('second');
    // The first still forwards, but its answer is not the one relayed.
    await first.waitFor('stdout', /#\d+ POST/);
    // When the later one stops, the earlier one, still running, answers again (#34, 16).
    await second.stop('SIGINT');
    await first.waitFor('stderr', /answering the endpoint's senders again/);
    expect((await send(e.url, { method: 'POST' })).text).toBe('first');
  });

  it('refuses a local answer it cannot relay, and the sender gets the configured answer at once', async () => {
    const s = await server({ respondTimeoutMs: 10_000 });
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const { client: responder } = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => responder.close());
    responder.send({ type: 'local-answer', seq: 1, status: 200, headers: [], body: '', bodyEncoding: 'utf8' });
    expect((await responder.next('error')).error.message).toMatch(/claim-responder before local-answer/);
    responder.send({ type: 'claim-responder' });
    // Every watcher hears of the claim; the claimant is also told the id is its own.
    const announced = await responder.next('responder');
    expect((await responder.next('responder')).you).toBe(true);
    expect(announced.you).toBeUndefined();

    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ status: 101, headers: [['Upgrade', 'websocket']], body: '', bodyEncoding: 'utf8' }, /protocol switch \(101\)/],
      [
        { status: 200, headers: [], body: Buffer.alloc(1024 * 1024 + 1).toString('base64'), bodyEncoding: 'base64' },
        /at most 1048576 are relayed/,
      ],
    ];
    for (const [fields, problem] of cases) {
      const started = performance.now();
      const sender = send(e.url, { method: 'POST' });
      const { request } = await responder.next('request');
      responder.send({ type: 'local-answer', seq: request.seq, ...fields });
      expect((await responder.next('error')).error.message).toMatch(problem);
      expect((await sender).text).toBe('configured');
      expect(performance.now() - started).toBeLessThan(3000);
    }
    // A denied header is not an error: it is dropped and listed.
    const sender = send(e.url, { method: 'POST' });
    const { request } = await responder.next('request');
    responder.send({
      type: 'local-answer',
      seq: request.seq,
      status: 409,
      headers: [
        ['Set-Cookie', 'a=b'],
        ['X-Ok', 'yes'],
      ],
      body: 'conflict',
      bodyEncoding: 'utf8',
    });
    const answer = await sender;
    expect([answer.status, answer.text, answer.headers['x-ok'], answer.headers['set-cookie']]).toEqual([
      409,
      'conflict',
      'yes',
      undefined,
    ]);
    expect((await e.tab.next('answered')).answer.droppedHeaders).toEqual(['set-cookie']);
  });

  it('relays only the latest responder: one replaced since is refused', async () => {
    const s = await server({ respondTimeoutMs: 10_000 });
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const claim = async () => {
      const { client } = await SocketClient.join(s.wsUrl, e.id, e.key);
      cleanups.push(() => client.close());
      client.send({ type: 'claim-responder' });
      await client.next('responder');
      await client.next('responder');
      return client;
    };
    const first = await claim();
    const second = await claim();
    const sender = send(e.url, { method: 'POST' });
    const { request } = await first.next('request');
    first.send({ type: 'local-answer', seq: request.seq, status: 201, headers: [], body: 'old', bodyEncoding: 'utf8' });
    expect((await first.next('error')).error.message).toMatch(/another hookwatch forward --respond answers/);
    second.send({
      type: 'local-answer',
      seq: request.seq,
      status: 202,
      headers: [],
      body: 'latest',
      bodyEncoding: 'utf8',
    });
    const answer = await sender;
    expect([answer.status, answer.text]).toEqual([202, 'latest']);
  });

  it('holds at most RESPOND_MAX_WAITING senders; the rest get the configured answer at once', async () => {
    const s = await server({ respondMaxWaiting: 1, respondTimeoutMs: 10_000 });
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const { client: responder } = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => responder.close());
    responder.send({ type: 'claim-responder' });
    await responder.next('responder');
    await responder.next('responder');
    const waiting = send(e.url, { method: 'POST' });
    await responder.next('request');
    const started = performance.now();
    expect((await send(e.url, { method: 'POST' })).text).toBe('configured');
    expect(performance.now() - started).toBeLessThan(1000);
    responder.send({ type: 'local-answer', seq: 1, status: 200, headers: [], body: 'first', bodyEncoding: 'utf8' });
    expect((await waiting).text).toBe('first');
  });

  it('cuts off a responder that floods large answers (4029)', async () => {
    const s = await server();
    const e = await endpoint(s.wsUrl, s.baseUrl);
    const { client: responder } = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => responder.close());
    responder.send({ type: 'claim-responder' });
    await responder.next('responder');
    const body = 'x'.repeat(1000 * 1024);
    for (let i = 0; i < 60; i++)
      responder.send({ type: 'local-answer', seq: i + 1, status: 200, headers: [], body, bodyEncoding: 'utf8' });
    expect(await responder.closed).toBe(4029);
  });

  it.skipIf(process.env.REDIS_URL === undefined)('relays across instances: the sender on A, the CLI on B', async () => {
    const prefix = testPrefix();
    const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix };
    const [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );
    const e = await endpoint(b.wsUrl, b.baseUrl);
    const to = await localApp((request, body, response) => {
      response.writeHead(202, { 'content-type': 'application/json', 'x-via': 'local' });
      response.end(JSON.stringify({ method: request.method, body: body.toString() }));
    });
    const run = cli(['forward', e.link, '--to', to, '--respond']);
    await responding(run);
    const onA = e.url.replace(b.baseUrl, a.baseUrl);
    for (let i = 0; i < 5; i++) {
      const answer = await send(onA, { method: 'PUT', body: `n${i}` });
      expect([answer.status, answer.headers['x-via'], answer.headers['x-hookwatch-response'], answer.text]).toEqual([
        202,
        'local',
        'forwarded',
        JSON.stringify({ method: 'PUT', body: `n${i}` }),
      ]);
    }
    // Gone from B: A's senders get the configured answer at once.
    await run.stop('SIGKILL');
    await e.tab
      .next('responder', 5000)
      .then(async (message) => (message.id === null ? message : e.tab.next('responder', 5000)));
    expect((await send(onA, { method: 'POST' })).text).toBe('configured');
  });
});
