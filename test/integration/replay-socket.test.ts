import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startCli, type CliRun } from '../helpers/cli.js';
import { startInstance } from '../helpers/instances.js';
import { connectRedis, dropPrefix, redisUrl, testPrefix } from '../helpers/redis.js';
import { send } from '../helpers/http.js';
import { SocketClient } from '../helpers/socket-client.js';
import { RawTarget } from '../helpers/raw-target.js';
import { startServer, type TestServer } from '../helpers/server.js';

const BODY = '{"order":{"id":7,"total":100}}';
const headerOf = (headers: Array<[string, string]>, name: string) =>
  headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

describe('page replay through the connected hookwatch forward', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  /** A server, a tab that captured one request, and a local target. */
  async function setUp(overrides: Parameters<typeof startServer>[0] = {}) {
    const server: TestServer = await startServer(overrides);
    cleanups.push(server.close);
    const { client: tab, welcome } = await SocketClient.create(server.wsUrl);
    cleanups.push(() => tab.close());
    const sent = await send(`${welcome.endpoint.url}/shop/orders?v=1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Shop': 'a' },
      body: BODY,
    });
    expect(sent.status).toBe(200);
    await tab.requests(1);
    const target = await RawTarget.start();
    cleanups.push(() => target.close());
    return { server, tab, welcome, target, link: `${server.baseUrl}/#${welcome.endpoint.id}.${welcome.endpoint.key}` };
  }

  async function forwarder(link: string, to: string): Promise<CliRun> {
    const run = startCli(['forward', link, '--to', to]);
    cleanups.push(() => run.stop('SIGKILL'));
    await run.waitFor('stderr', /joined endpoint/);
    return run;
  }

  it('a replay reaches the forwarder, goes to its target byte for byte, and only the asking tab hears how it went', async () => {
    const { server, tab, welcome, target, link } = await setUp();
    const { client: other } = await SocketClient.join(server.wsUrl, welcome.endpoint.id, welcome.endpoint.key);
    cleanups.push(() => other.close());
    const cli = await forwarder(link, target.url('/local'));

    tab.send({ type: 'replay', id: 'r1', seq: 1 });
    const started = await tab.next('replay-started', 5000);
    expect(started).toMatchObject({ id: 'r1', seq: 1, target: `${target.url('/local')}/shop/orders?v=1` });
    const result = await tab.next('replay-result', 5000);
    expect(result).toMatchObject({ id: 'r1', seq: 1, status: 200, body: 'ok', bodyEncoding: 'utf8' });
    const [received] = await target.waitForRequests(1);
    expect(received?.method).toBe('POST');
    expect(received?.target).toBe('/local/shop/orders?v=1');
    expect(received?.body.toString()).toBe(BODY);
    expect(headerOf(received?.headers ?? [], 'x-shop')).toBe('a');
    await cli.waitFor('stdout', /^replay of #1 POST \/shop\/orders\?v=1 → 200 in \d+ ms$/m);

    // Not a capture: no new request on the endpoint; and the other tab heard nothing of it.
    tab.send({ type: 'clear' });
    await tab.next('cleared');
    expect(tab.messages.filter((message) => message.type === 'request')).toHaveLength(0);
    expect(other.messages.map((message) => message.type)).not.toContain('replay-result');
    expect(other.messages.map((message) => message.type)).not.toContain('replay');
  });

  it('an edited replay sends the edited method, path, headers and body', async () => {
    const { tab, target, link } = await setUp();
    await forwarder(link, target.url('/local'));
    const edited = BODY.replace('"total":100', '"total":250');
    tab.send({
      type: 'replay',
      id: 'e1',
      seq: 1,
      edited: {
        method: 'PUT',
        path: '/shop/edited?v=2',
        headers: [
          ['Content-Type', 'application/json'],
          ['X-Edited', 'yes'],
        ],
        body: edited,
        bodyEncoding: 'utf8',
      },
    });
    const result = await tab.next('replay-result', 5000);
    expect(result.status).toBe(200);
    const [received] = await target.waitForRequests(1);
    expect(received?.method).toBe('PUT');
    expect(received?.target).toBe('/local/shop/edited?v=2');
    expect(received?.body.toString()).toBe(edited);
    expect(headerOf(received?.headers ?? [], 'x-edited')).toBe('yes');
    expect(headerOf(received?.headers ?? [], 'x-shop')).toBeUndefined();
  });

  it('with no forwarder connected, the tab is told so and how to start one; a request no longer stored is said so', async () => {
    const { tab } = await setUp();
    const asked = performance.now();
    tab.send({ type: 'replay', id: 'n1', seq: 1 });
    const result = await tab.next('replay-result', 5000);
    expect(result.id).toBe('n1');
    expect(result.error).toMatch(
      /No hookwatch forward is connected to this endpoint.*hookwatch forward '<share link>' --to/,
    );
    expect(performance.now() - asked).toBeLessThan(4000);
    tab.send({ type: 'replay', id: 'n2', seq: 9 });
    const missing = await tab.next('replay-result', 5000);
    expect(missing).toMatchObject({
      id: 'n2',
      error: 'Request #9 is no longer stored, so there is nothing to replay.',
    });
  });

  it('refuses malformed, oversized and out-of-turn replay messages with BAD_MESSAGE, and sends nothing', async () => {
    const { tab, target, link } = await setUp({ maxBodyBytes: 1024 });
    await forwarder(link, target.url('/local'));
    const edited = (body: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      method: 'POST',
      path: '/x',
      headers: [],
      body,
      bodyEncoding: 'utf8',
      ...extra,
    });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { type: 'replay', id: 'a', seq: 1, edited: edited('x'.repeat(1025)) },
        /the edited body is 1025 bytes, past this endpoint's 1024-byte body cap/,
      ],
      [
        { type: 'replay', id: 'b', seq: 1, edited: edited('', { headers: [['X-A', 'one\r\nInjected: yes']] }) },
        /a header value must not hold a line break/,
      ],
      [
        { type: 'replay', id: 'c', seq: 1, edited: edited('', { headers: [['Bad Name', 'x']] }) },
        /a header name must be an HTTP token/,
      ],
      [
        { type: 'replay', id: 'd', seq: 1, edited: edited('', { path: 'http://elsewhere/' }) },
        /path must start with \//,
      ],
      [
        { type: 'replay', id: 'e', seq: 1, edited: edited('', { method: 'GE T' }) },
        /method must be an HTTP method token/,
      ],
      [
        { type: 'replay', id: 'f', seq: 1, edited: edited('%%%', { bodyEncoding: 'base64' }) },
        /edited.body is not base64/,
      ],
      [{ type: 'replay', id: 'bad id!', seq: 1 }, /id must be 1-64/],
      [
        {
          type: 'replay-result',
          id: 'x.y',
          seq: 1,
          target: '',
          durationMs: 0,
          headers: [],
          body: '',
          bodyEncoding: 'utf8',
          bodyTruncated: false,
        },
        /send announce-forwarder before replay-result/,
      ],
    ];
    for (const [message, problem] of cases) {
      tab.send(message);
      const error = await tab.next('error', 5000);
      expect(error.error.code).toBe('BAD_MESSAGE');
      expect(error.error.message).toMatch(problem);
    }
    // A deep or huge frame: refused whole, the socket stays usable.
    tab.send(<Record<string, unknown>>{
      type: 'replay',
      id: 'g',
      seq: 1,
      edited: edited('', { headers: Array.from({ length: 101 }, () => ['X', 'y']) }),
    });
    expect((await tab.next('error', 5000)).error.code).toBe('BAD_MESSAGE');
    expect(target.requests).toHaveLength(0);
    tab.send({ type: 'replay', id: 'ok', seq: 1 });
    expect((await tab.next('replay-result', 5000)).status).toBe(200);
  });

  it('works across instances on one Redis: the tab on one, the forwarder on another', async () => {
    const prefix = testPrefix();
    const env = {
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      RATE_LIMIT_PER_ADDRESS: '0',
      LIVE_CONNECTS_PER_ADDRESS: '0',
    };
    const [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.push(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      const redis = connectRedis();
      await dropPrefix(redis, prefix);
      await redis.quit();
    });
    if (!a || !b) throw new Error('no instances');
    const { client: tab, welcome } = await SocketClient.create(a.wsUrl);
    cleanups.push(() => tab.close());
    await send(`${b.baseUrl}${new URL(welcome.endpoint.url).pathname}/x`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'across',
    });
    await tab.requests(1, 5000);
    const target = await RawTarget.start();
    cleanups.push(() => target.close());
    await forwarder(`${b.baseUrl}/#${welcome.endpoint.id}.${welcome.endpoint.key}`, target.url('/t'));
    tab.send({ type: 'replay', id: 'x1', seq: 1 });
    expect(await tab.next('replay-started', 5000)).toMatchObject({ id: 'x1', seq: 1 });
    expect(await tab.next('replay-result', 5000)).toMatchObject({ id: 'x1', status: 200 });
    const [received] = await target.waitForRequests(1);
    expect(received?.target).toBe('/t/x');
    expect(received?.body.toString()).toBe('across');
  }, 60_000);
});
