import { createHmac } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { ForwardedMessage } from '../../src/shared/protocol.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { ensureCliBuilt, startCli, type CliRun } from '../helpers/cli.js';
import { send, sendRaw } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { RawTarget } from '../helpers/raw-target.js';
import { startServer, type TestServer } from '../helpers/server.js';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

describe('hookwatch forward', () => {
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
  async function target(port?: number): Promise<RawTarget> {
    const started = await RawTarget.start(port);
    cleanups.push(() => started.close());
    return started;
  }
  /** An endpoint made by a test watcher, and its share link as the page builds it. */
  async function endpoint(s: TestServer) {
    const { client, welcome } = await SocketClient.create(s.wsUrl);
    cleanups.push(() => client.close());
    const { id, key } = welcome.endpoint;
    return { client, id, key, url: welcome.endpoint.url, link: `${s.baseUrl}/#${id}.${key}` };
  }
  function cli(args: string[], options: Parameters<typeof startCli>[1] = {}): CliRun {
    const run = startCli(args, options);
    cleanups.push(() => run.stop('SIGKILL'));
    return run;
  }
  /** A port nothing listens on (it was free a moment ago). */
  async function freePort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }

  it('forwards method, path, query, headers (order, case, duplicates) and body bytes exactly', async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/hook')]);
    await run.waitFor('stderr', /joined endpoint/);

    const host = new URL(s.baseUrl).host;
    const base = `/api/webhook-tester/${e.id}`;
    const json = '{"event":"push"}';
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const requests: Buffer[] = [
      Buffer.from(
        `POST ${base}/github/push?x=1 HTTP/1.1\r\nHost: ${host}\r\nX-Dup: one\r\nUser-Agent: sender/1\r\nx-dup: two\r\nX-MiXeD-CaSe: Value With Spaces\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`,
      ),
      Buffer.concat([
        Buffer.from(
          `PUT ${base}/bin HTTP/1.1\r\nContent-Type: application/octet-stream\r\nHost: ${host}\r\nContent-Length: 256\r\nConnection: close\r\n\r\n`,
        ),
        binary,
      ]),
      // Hop-by-hop headers, one named by Connection, and a chunked body: none of that framing goes on.
      Buffer.from(
        `PATCH ${base}/deep/sub/path?a=1&a=2&b=%20x HTTP/1.1\r\nHost: ${host}\r\nConnection: close, X-Hop\r\nX-Hop: drop me\r\nKeep-Alive: timeout=5\r\n` +
          `X-Keep: kept\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n`,
      ),
      Buffer.from(`GET ${base}? HTTP/1.1\r\nAccept: */*\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      Buffer.from(`POST ${base}/empty HTTP/1.1\r\nHost: ${host}\r\nX-Empty: \r\nConnection: close\r\n\r\n`),
    ];
    for (const request of requests) expect(await sendRaw(s.baseUrl, request)).toMatch(/^HTTP\/1\.1 200 /);

    const captured: CapturedRequest[] = await e.client.requests(requests.length);
    const received = await t.waitForRequests(requests.length);
    const targetHost = `127.0.0.1:${t.port}`;
    expect(received.map((r) => `${r.method} ${r.target}`)).toEqual([
      'POST /hook/github/push?x=1',
      'PUT /hook/bin',
      'PATCH /hook/deep/sub/path?a=1&a=2&b=%20x',
      'GET /hook?',
      'POST /hook/empty',
    ]);

    // Spot checks, written out: the first request's head as the target saw it.
    expect(received[0]?.headers).toEqual([
      ['Host', targetHost],
      ['X-Dup', 'one'],
      ['User-Agent', 'sender/1'],
      ['x-dup', 'two'],
      ['X-MiXeD-CaSe', 'Value With Spaces'],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(json.length)],
      // The captured sender's address, set by forward (the sender's own forwarding headers are dropped).
      ['X-Forwarded-For', captured[0]?.remoteAddress],
      // node:http's own, for its connection to the target (hop-by-hop, like the one dropped).
      ['Connection', 'keep-alive'],
    ]);
    expect(received[1]?.headers[1]).toEqual(['Host', targetHost]);
    expect(received[2]?.headers).toEqual([
      ['Host', targetHost],
      ['X-Keep', 'kept'],
      ['Content-Length', '11'],
      ['X-Forwarded-For', captured[2]?.remoteAddress],
      ['Connection', 'keep-alive'],
    ]);
    expect(received[4]?.headers).toContainEqual(['Content-Length', '0']);

    // In general: every captured pair but Host and hop-by-hop ones, in order, reaches the target.
    const endToEnd = (headers: Array<[string, string]>, extraDropped: string[] = []) =>
      headers.filter(
        ([name]) =>
          ![...HOP_BY_HOP, 'host', 'content-length', 'x-forwarded-for', ...extraDropped].includes(name.toLowerCase()),
      );
    captured.forEach((request, i) => {
      const got = received[i]!;
      expect(endToEnd(got.headers)).toEqual(endToEnd(request.headers, i === 2 ? ['x-hop'] : []));
      expect(got.headers.filter(([name]) => name.toLowerCase() === 'x-forwarded-for')).toEqual([
        ['X-Forwarded-For', request.remoteAddress],
      ]);
      expect(got.headers.filter(([name]) => name.toLowerCase() === 'host')).toEqual([['Host', targetHost]]);
      expect(got.headers.some(([name]) => name.toLowerCase() === 'transfer-encoding')).toBe(false);
    });
    expect(received[0]?.body.toString()).toBe(json);
    expect(received[1]?.body.equals(binary)).toBe(true);
    expect(received[2]?.body.toString()).toBe('hello world');
    expect(received[3]?.body.length).toBe(0);
    expect(received[3]?.headers.some(([name]) => name.toLowerCase() === 'content-length')).toBe(false);

    const lines = await run.waitForLines('stdout', /→ 200 in \d+ ms$/, requests.length);
    expect(lines.map((line) => line.replace(/ in \d+ ms$/, ''))).toEqual([
      '#1 POST /github/push?x=1 → 200',
      '#2 PUT /bin → 200',
      '#3 PATCH /deep/sub/path?a=1&a=2&b=%20x → 200',
      '#4 GET /? → 200',
      '#5 POST /empty → 200',
    ]);
    // The key went only into the join message.
    expect(run.stdout() + run.stderr()).not.toContain(e.key);
    expect(s.logs()).not.toContain(e.key);
  });

  it('forwards a truncated body anyway, and says so on its line', async () => {
    const s = await server({ maxBodyBytes: 1024 });
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/')]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'x'.repeat(3000) });
    const [got] = await t.waitForRequests(1);
    expect(got?.body.length).toBe(1024);
    expect(got?.headers).toContainEqual(['content-length', '1024']);
    await run.waitFor(
      'stdout',
      /#1 POST \/ → 200 in \d+ ms \(warning: body truncated by the server, only 1024 of 3000 bytes kept\)/,
    );
  });

  it('skips stored requests unless --from-seq asks for them', async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    for (const body of ['one', 'two', 'three']) await send(e.url, { method: 'POST', body });

    const fresh = cli(['forward', e.link, '--to', t.url('/new')]);
    await fresh.waitFor('stderr', /skipping 3 stored request\(s\)/);
    const replay = cli(['forward', e.link, '--to', t.url('/old'), '--from-seq', '1']);
    await replay.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'four' });

    await t.waitForRequests(4);
    const seen = (prefix: string) =>
      t.requests.filter((r) => r.target.startsWith(prefix)).map((r) => r.body.toString());
    await replay.waitForLines('stdout', /→ 200/, 3);
    await fresh.waitForLines('stdout', /→ 200/, 1);
    expect(seen('/old')).toEqual(['two', 'three', 'four']);
    expect(seen('/new')).toEqual(['four']);
  });

  it('resumes after its socket is dropped: every request reaches the target once, in seq order', async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/hook')]);
    await run.waitFor('stderr', /joined endpoint/);
    // Only the CLI's socket is left, so the server-side sockets below are its.
    await e.client.close();
    const dropCliSocket = () => {
      expect(s.app.websocketServer.clients.size).toBe(1);
      for (const socket of s.app.websocketServer.clients) socket.terminate();
    };

    const total = 30;
    for (let n = 1; n <= total; n++) {
      await send(e.url, { method: 'POST', headers: { 'x-n': String(n) }, body: String(n) });
      if (n === 8) dropCliSocket();
      if (n === 18) {
        // The first drop has healed (the CLI joined again); now drop it again, mid-stream.
        await run.waitForLines('stderr', /rejoined endpoint/, 1);
        dropCliSocket();
      }
    }

    await run.waitForLines('stderr', /rejoined endpoint/, 2);
    const lines = await run.waitForLines('stdout', /→ 200/, total);
    const received = await t.waitForRequests(total);
    expect(received.map((r) => r.body.toString())).toEqual(Array.from({ length: total }, (_, i) => String(i + 1)));
    expect(lines.map((line) => line.split(' ')[0])).toEqual(Array.from({ length: total }, (_, i) => `#${i + 1}`));
    expect(run.stderr()).toMatch(/connection lost \(the connection was cut\); reconnecting in 0\.5 s/);
    expect(run.stderr()).not.toMatch(/dropped while away/);
    // Nothing more trickles in later.
    await send(e.url, { method: 'POST', body: 'last' });
    await t.waitForRequests(total + 1);
    expect(t.requests.length).toBe(total + 1);
  });

  it('sends one request at a time by default, and up to --concurrency at once', async () => {
    const s = await server();
    const t = await target();
    const events: string[] = [];
    const held: Array<() => void> = [];
    let holding = true;
    t.beforeAnswer = async (request) => {
      events.push(`received ${request.target} ${request.body.toString()}`);
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      events.push(`answered ${request.target} ${request.body.toString()}`);
    };
    const e = await endpoint(s);
    const serial = cli(['forward', e.link, '--to', t.url('/one')]);
    const parallel = cli(['forward', e.link, '--to', t.url('/three'), '--concurrency', '3']);
    await serial.waitFor('stderr', /joined endpoint/);
    await parallel.waitFor('stderr', /joined endpoint/);
    for (const body of ['a', 'b', 'c']) await send(e.url, { method: 'POST', body });

    // With every answer held, all three reach the target over --concurrency 3, one over the default.
    await t.waitForRequests(4);
    const at = (prefix: string) => t.requests.filter((r) => r.target.startsWith(prefix)).map((r) => r.body.toString());
    expect(at('/three').sort()).toEqual(['a', 'b', 'c']);
    expect(at('/one')).toEqual(['a']);

    holding = false;
    for (const release of held.splice(0)) release();
    await serial.waitForLines('stdout', /→ 200/, 3);
    await parallel.waitForLines('stdout', /→ 200/, 3);
    // The default sends each request only after the previous one was answered, in seq order.
    expect(events.filter((event) => event.includes('/one'))).toEqual([
      'received /one a',
      'answered /one a',
      'received /one b',
      'answered /one b',
      'received /one c',
      'answered /one c',
    ]);
  });

  it("refuses a sub-path with a dot-segment, so a sender cannot leave --to's path; and sets X-Forwarded-For to the real sender", async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/hook'), '--retries', '0']);
    await run.waitFor('stderr', /joined endpoint/);

    const host = new URL(s.baseUrl).host;
    const base = `/api/webhook-tester/${e.id}`;
    // What a sender adds to pose as someone else (loopback, say) or as another host.
    const forged =
      'X-Forwarded-For: 10.1.2.3\r\nX-Real-IP: 10.1.2.3\r\nForwarded: for=10.1.2.3;proto=https\r\nX-Forwarded-Host: admin.internal\r\nTrue-Client-IP: 10.1.2.3\r\n';
    const escapes = [
      '/../admin/users',
      '/%2e%2e/admin/users',
      '/%2E%2E/admin/users',
      '/.%2e/admin/users',
      '/x/..%2f..%2fadmin/users',
      '/./admin/users',
    ];
    for (const path of [...escapes, '/ok']) {
      const answer = await sendRaw(
        s.baseUrl,
        `POST ${base}${path}?q=1 HTTP/1.1\r\nHost: ${host}\r\n${forged}Content-Length: 2\r\nConnection: close\r\n\r\nhi`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    }
    const captured: CapturedRequest[] = await e.client.requests(escapes.length + 1);
    expect(captured.map((request) => request.subPath)).toEqual([...escapes, '/ok']);

    // One at a time, in seq order: once #7's line is out, the refused ones were all handled.
    const lines = await run.waitForLines('stdout', /^#\d/, escapes.length + 1);
    escapes.forEach((path, i) => {
      expect(lines[i]).toBe(
        `#${i + 1} POST ${path}?q=1 → not delivered (refused: the path ${path} has a dot-segment and would leave --to's path)`,
      );
    });
    expect(lines[escapes.length]).toMatch(/^#7 POST \/ok\?q=1 → 200 in \d+ ms$/);
    expect(t.requests.map((request) => request.target)).toEqual(['/hook/ok?q=1']);

    // The one delivered: the sender's forwarding headers are gone, and one X-Forwarded-For names
    // the address the server saw.
    const [got] = await t.waitForRequests(1);
    const names = got!.headers.map(([name]) => name.toLowerCase());
    for (const name of ['x-real-ip', 'forwarded', 'x-forwarded-host', 'true-client-ip'])
      expect(names).not.toContain(name);
    expect(got!.headers.filter(([name]) => name.toLowerCase() === 'x-forwarded-for')).toEqual([
      ['X-Forwarded-For', captured[escapes.length]!.remoteAddress],
    ]);
    expect(got!.raw.toString('latin1')).not.toContain('10.1.2.3');

    // Tabs see each refusal as a failed forward, with the reason.
    for (let seq = 1; seq <= escapes.length; seq++) {
      const report: ForwardedMessage = await e.client.next('forwarded');
      expect(report).toMatchObject({ seq, target: t.url('/hook'), headers: [], body: '' });
      expect(report.status).toBeUndefined();
      expect(report.error).toBe(`refused: the path ${escapes[seq - 1]} has a dot-segment and would leave --to's path`);
    }
    expect((await e.client.next('forwarded')).status).toBe(200);
    expect(run.stderr()).not.toMatch(/server error/);
  });

  it('retries a target that is down, and delivers once it is up', async () => {
    const s = await server();
    const port = await freePort();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', `http://127.0.0.1:${port}/hook`]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'late' });
    await run.waitFor('stderr', /#1 POST \/: .*ECONNREFUSED.*; retry 1\/5 in 0\.5 s/);
    const t = await target(port);
    const [got] = await t.waitForRequests(1, 15_000);
    expect(got?.body.toString()).toBe('late');
    await run.waitFor('stdout', /^#1 POST \/ → 200 in \d+ ms$/m, 15_000);
  });

  it('gives up on a request after the last retry, reports it not delivered, and moves on', async () => {
    const s = await server();
    const port = await freePort();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', `http://127.0.0.1:${port}/`, '--retries', '1']);
    await run.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'a' });
    await send(e.url, { method: 'PUT', body: 'b' });
    const lines = await run.waitForLines('stdout', /not delivered/, 2);
    expect(lines[0]).toMatch(/^#1 POST \/ → not delivered \(.*ECONNREFUSED.*, 2 attempts\)$/);
    expect(lines[1]).toMatch(/^#2 PUT \/ → not delivered/);
    expect(run.stderr()).toMatch(/#1 POST \/: .*ECONNREFUSED.*; gave up after 2 attempt\(s\)/);
  });

  it('bounds a whole answer by --timeout and reports a 101, then goes on with the next request', async () => {
    // A target that switches protocols, or answers with a body that trickles in: neither may
    // hold the forwarder past --timeout.
    const misbehaving = createServer((socket) => {
      socket.once('data', (head: Buffer) => {
        const path = head.toString('latin1').split(' ')[1];
        if (path === '/switch') {
          socket.write(
            'HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\nnot http any more',
          );
          return;
        }
        if (path === '/trickle') {
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n');
          let sent = 0;
          const drip = setInterval(
            () => (++sent >= 100 || socket.destroyed ? clearInterval(drip) : socket.write('x')),
            100,
          );
          socket.on('close', () => clearInterval(drip));
          return;
        }
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => misbehaving.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => misbehaving.close(resolve)));
    const port = (misbehaving.address() as { port: number }).port;
    const s = await server();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', `http://127.0.0.1:${port}/`, '--timeout', '1', '--retries', '0']);
    await run.waitFor('stderr', /joined endpoint/);
    for (const path of ['/switch', '/trickle', '/ok']) await send(`${e.url}${path}`, { method: 'POST', body: 'a' });
    const lines = await run.waitForLines('stdout', /^#\d/, 3);
    expect(lines[0]).toMatch(/^#1 POST \/switch → 101/);
    expect(lines[1]).toMatch(/^#2 POST \/trickle → 200/);
    expect(lines[2]).toMatch(/^#3 POST \/ok → 200/);
  });

  it('on Ctrl-C lets the request in flight finish, then exits 0', async () => {
    const s = await server();
    const t = await target();
    let release = () => {};
    t.beforeAnswer = () => new Promise<void>((resolve) => (release = resolve));
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/')]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'slow' });
    await t.waitForRequests(1);

    run.child.kill('SIGINT');
    await run.waitFor('stderr', /stopping/);
    release();
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/^#1 POST \/ → 200 in \d+ ms$/m);
    expect(run.stderr()).toMatch(/stopped; everything up to #1 was handled \(continue later with --from-seq 1\)/);
  });

  it('on a second Ctrl-C cuts the request in flight at once and still exits 0', async () => {
    const s = await server();
    const t = await target();
    t.beforeAnswer = () => new Promise<void>(() => {});
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/')]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'stuck' });
    await t.waitForRequests(1);
    run.child.kill('SIGINT');
    await run.waitFor('stderr', /stopping/);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toMatch(/^#1 POST \/ → not delivered \(stopped\)$/m);
    expect(run.stderr()).toMatch(/a request in flight was cut, from #1 \(continue later with --from-seq 0\)/);
  });

  it('exits 1 when the endpoint is gone, and when the key is wrong', async () => {
    // With no grace, the endpoint is purged the moment its last watcher (the CLI) drops.
    const s = await server({ graceMs: 0 });
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/')]);
    await run.waitFor('stderr', /joined endpoint/);
    await e.client.close();
    for (const socket of s.app.websocketServer.clients) socket.terminate();
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toMatch(/the endpoint is gone: it expired/);

    const other = await endpoint(s);
    const wrongKey = cli(['forward', `${s.baseUrl}/#${other.id}.WrongKey123`, '--to', t.url('/')]);
    expect(await wrongKey.exited).toBe(1);
    expect(wrongKey.stderr()).toMatch(/endpoint not found: it expired, or the share link is wrong/);
    expect(wrongKey.stderr()).not.toContain('WrongKey123');
  });

  it('reports each result to every watcher of the endpoint as a forwarded message', async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', t.url('/hook')]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(`${e.url}/github/push?x=1`, { method: 'POST', body: 'hello' });
    await run.waitFor('stdout', /#1 POST \/github\/push\?x=1 → 200/);

    const forwarded: ForwardedMessage = await e.client.next('forwarded');
    expect(forwarded).toEqual({
      type: 'forwarded',
      seq: 1,
      target: `${t.url('/hook')}/github/push?x=1`,
      status: 200,
      durationMs: expect.any(Number) as number,
      headers: [['Content-Length', '2']],
      body: 'ok',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    });
    // A second watcher, joined with the key like a second tab, gets the first result in its
    // backlog (kept with its request) and the next one live.
    const tab = await SocketClient.join(s.wsUrl, e.id, e.key);
    cleanups.push(() => tab.client.close());
    expect((await tab.client.next('forwarded')).seq).toBe(1);
    await send(e.url, { method: 'PUT', body: 'again' });
    expect((await tab.client.next('forwarded')).seq).toBe(2);
    expect((await e.client.next('forwarded')).seq).toBe(2);
    // Nothing the server refused: a refused report would come back as an error to the CLI.
    expect(run.stderr()).not.toMatch(/server error/);
  });

  it('reports the first 4 KiB of a large or binary answer, and a request it could not deliver', async () => {
    const s = await server();
    const big = createHttpServer((request, response) => {
      request.resume();
      if (request.url === '/binary') {
        response
          .writeHead(502, [
            ['X-Reason', 'upstream'],
            ['X-Dup', 'a'],
            ['X-Dup', 'b'],
          ])
          .end(Buffer.from([0xff, 0x00, 0xfe]));
      } else response.writeHead(201, { 'Content-Type': 'text/plain' }).end('x'.repeat(10_000));
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => big.close(resolve)));
    const port = (big.address() as { port: number }).port;
    const e = await endpoint(s);
    const run = cli(['forward', e.link, '--to', `http://127.0.0.1:${port}`]);
    await run.waitFor('stderr', /joined endpoint/);
    await send(`${e.url}/text`, { method: 'POST', body: 'a' });
    await send(`${e.url}/binary`, { method: 'POST', body: 'b' });

    const text = await e.client.next('forwarded');
    expect(text).toMatchObject({
      seq: 1,
      status: 201,
      body: 'x'.repeat(4096),
      bodyEncoding: 'utf8',
      bodyTruncated: true,
    });
    expect(text.headers).toContainEqual(['Content-Type', 'text/plain']);
    const binary = await e.client.next('forwarded');
    expect(binary).toMatchObject({
      seq: 2,
      status: 502,
      body: Buffer.from([0xff, 0x00, 0xfe]).toString('base64'),
      bodyEncoding: 'base64',
      bodyTruncated: false,
    });
    expect(binary.headers.slice(0, 3)).toEqual([
      ['X-Reason', 'upstream'],
      ['X-Dup', 'a'],
      ['X-Dup', 'b'],
    ]);

    const down = await freePort();
    const failing = cli(['forward', e.link, '--to', `http://127.0.0.1:${down}/`, '--retries', '0']);
    await failing.waitFor('stderr', /joined endpoint/);
    await send(e.url, { method: 'POST', body: 'c' });
    const failed = await e.client.next('forwarded');
    // The first forwarder delivers #3 too: pick the failing one's report by its target.
    const failure = failed.target.includes(String(down)) ? failed : await e.client.next('forwarded');
    expect(failure).toMatchObject({ seq: 3, target: `http://127.0.0.1:${down}/`, headers: [], body: '' });
    expect(failure.status).toBeUndefined();
    expect(failure.error).toMatch(/ECONNREFUSED/);
  });

  it("--verify prints each request's signature verdict under its line, reading the secret from the environment (the whole expected signature with --show-expected)", async () => {
    const s = await server();
    const t = await target();
    const e = await endpoint(s);
    const secret = 'forward-secret-123';
    const run = cli(['forward', e.link, '--to', t.url('/'), '--verify', 'github:env:HOOK_SECRET', '--show-expected'], {
      env: { HOOK_SECRET: secret },
    });
    await run.waitFor('stderr', /joined endpoint/);
    const body = '{"action":"opened"}';
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    await send(e.url, { method: 'POST', headers: { 'X-Hub-Signature-256': signature }, body });
    await send(e.url, {
      method: 'POST',
      headers: { 'X-Hub-Signature-256': signature },
      body: body.replace('opened', 'closed'),
    });

    await run.waitForLines('stdout', /^ {2}signature: /, 2);
    const lines = run.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^#1 POST \/ → 200 in \d+ ms$/);
    expect(lines[1]).toBe('  signature: valid (github)');
    expect(lines[2]).toMatch(/^#2 POST \/ → 200 in \d+ ms$/);
    const expected = `sha256=${createHmac('sha256', secret).update(body.replace('opened', 'closed')).digest('hex')}`;
    expect(lines[3]?.startsWith(`  signature: mismatch (github): expected ${expected}, got ${signature} — `)).toBe(
      true,
    );
    expect(run.stdout() + run.stderr()).not.toContain(secret);
    // From the environment, so no warning about the process list.
    expect(run.stderr()).not.toMatch(/visible to other users/);
  });
});
