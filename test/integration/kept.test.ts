import { afterEach, describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import { send, sendRaw } from '../helpers/http.js';
import { startInstance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';
import { connectRedis, dropPrefix, redisUrl, testPrefix } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';

interface Polled {
  requests: CapturedRequest[];
  lastSeq: number;
  clearedSeq: number;
  gap: boolean;
  expiresAt: string | null;
}

describe('kept endpoints over HTTP', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer({ logLevel: 'warn', ...overrides });
    cleanups.push(started.close);
    return started;
  }
  async function createKept(s: TestServer | { baseUrl: string }): Promise<EndpointInfo> {
    const created = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    expect(created.status).toBe(201);
    return JSON.parse(created.text) as EndpointInfo;
  }
  const bearer = (endpoint: EndpointInfo) => ({ authorization: `Bearer ${endpoint.key}` });
  async function poll(baseUrl: string, endpoint: EndpointInfo, afterSeq = 0): Promise<Polled> {
    const answer = await send(`${baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=${afterSeq}`, {
      headers: bearer(endpoint),
    });
    expect(answer.status).toBe(200);
    return JSON.parse(answer.text) as Polled;
  }

  it('creates a kept endpoint that captures on its own path only, for two hours', async () => {
    const s = await server();
    const before = Date.now();
    const endpoint = await createKept(s);
    expect(endpoint).toMatchObject({
      kind: 'kept',
      url: `${s.baseUrl}/api/webhook-endpoint/${endpoint.id}`,
      maxBodyBytes: 65_536,
      maxRequests: 50,
      requestsKept: 50,
    });
    expect(endpoint.key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(endpoint.response).toMatchObject({ status: 200 });
    const lives = Date.parse(endpoint.expiresAt ?? '') - Date.parse(endpoint.createdAt);
    expect(lives).toBe(2 * 60 * 60 * 1000);
    expect(Date.parse(endpoint.createdAt)).toBeGreaterThanOrEqual(before - 1000);

    expect((await send(`${endpoint.url}/github/push?x=1`, { method: 'PATCH', body: 'hello' })).status).toBe(200);
    expect((await send(`${s.baseUrl}/api/webhook-tester/${endpoint.id}`, { method: 'POST' })).status).toBe(404);
    const live = await SocketClient.create(s.wsUrl);
    cleanups.push(() => live.client.close());
    expect(
      (await send(`${s.baseUrl}/api/webhook-endpoint/${live.welcome.endpoint.id}`, { method: 'POST' })).status,
    ).toBe(404);

    const polled = await poll(s.baseUrl, endpoint);
    expect(polled.requests.map((request) => [request.seq, request.method, request.subPath, request.body])).toEqual([
      [1, 'PATCH', '/github/push', 'hello'],
    ]);
    expect(polled.expiresAt).toBe(endpoint.expiresAt);
  });

  it('redacts secret header values before storage, keeping names and order, and lists them', async () => {
    const s = await server({ redactHeaders: ['x-internal'] });
    const endpoint = await createKept(s);
    const secrets = [
      'Bearer s3cret-1',
      'session=s3cret-2',
      's3cret-3',
      's3cret-4',
      't=1,v1=s3cret-5',
      'sha256=s3cret-6',
      's3cret-7',
      's3cret-8',
      's3cret-9',
      's3cret-10',
    ];
    const path = new URL(endpoint.url).pathname;
    await sendRaw(
      s.baseUrl,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${secrets[0]}\r\nCookie: ${secrets[1]}\r\nX-Api-Key: ${secrets[2]}\r\nApi-Key: ${secrets[3]}\r\n` +
        `Stripe-Signature: ${secrets[4]}\r\nX-Hub-Signature-256: ${secrets[5]}\r\nX-Custom-Token: ${secrets[6]}\r\nfoo-SECRET: ${secrets[7]}\r\nX-Internal: ${secrets[8]}\r\n` +
        `Proxy-Authorization: ${secrets[9]}\r\nX-Plain: visible\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`,
    );
    const [request] = (await poll(s.baseUrl, endpoint)).requests;
    const names = request?.headers.map(([name]) => name);
    expect(names).toEqual([
      'Host',
      'Authorization',
      'Cookie',
      'X-Api-Key',
      'Api-Key',
      'Stripe-Signature',
      'X-Hub-Signature-256',
      'X-Custom-Token',
      'foo-SECRET',
      'X-Internal',
      'Proxy-Authorization',
      'X-Plain',
      'Content-Length',
      'Connection',
    ]);
    const values = Object.fromEntries(request?.headers ?? []);
    for (const name of names?.slice(1, 11) ?? []) expect(values[name]).toBe('[redacted]');
    expect(values['X-Plain']).toBe('visible');
    expect(request?.redacted).toEqual(names?.slice(1, 11));
    const everything = JSON.stringify(await poll(s.baseUrl, endpoint)) + s.logs();
    for (const secret of secrets) expect(everything).not.toContain(secret.split('=').at(-1));
  });

  it('redacts more secret headers, secret query values and the user-info of an absolute-form target', async () => {
    const s = await server();
    const endpoint = await createKept(s);
    const path = new URL(endpoint.url).pathname;
    const secretHeaders = [
      'X-Authorization',
      'Authentication',
      'Apikey',
      'X-Apikey',
      'Api_Key',
      'X-Secret-Key',
      'X-Access-Key',
      'X-Auth',
      'X-Password',
      'Token',
      'Secret',
      'Ocp-Apim-Subscription-Key',
      'X-Functions-Key',
    ];
    const plainHeaders = ['Idempotency-Key', 'X-GitHub-Delivery', 'X-Request-Id'];
    const headerLines = [
      ...secretHeaders.map((name, i) => `${name}: h-s3cret-${i}`),
      ...plainHeaders.map((name) => `${name}: visible`),
    ].join('\r\n');
    const target = `http://someone:pw-s3cret@x${path}/hook?page=2&token=q-s3cret-1&api_key=q-s3cret-2&access_token=q-s3cret-3&sig=q-s3cret-4&hub.mode=subscribe&hub.challenge=ch-1&hub.verify_token=q-s3cret-5`;
    await sendRaw(
      s.baseUrl,
      `POST ${target} HTTP/1.1\r\nHost: x\r\n${headerLines}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`,
    );
    const polled = await poll(s.baseUrl, endpoint);
    const [request] = polled.requests;
    expect(request?.url).toBe(
      `http://%5Bredacted%5D@x${path}/hook?page=2&token=%5Bredacted%5D&api_key=%5Bredacted%5D&access_token=%5Bredacted%5D&sig=%5Bredacted%5D` +
        '&hub.mode=subscribe&hub.challenge=ch-1&hub.verify_token=%5Bredacted%5D',
    );
    expect(request?.subPath).toBe('/hook');
    expect(request?.query).toEqual({
      page: '2',
      token: '[redacted]',
      api_key: '[redacted]',
      access_token: '[redacted]',
      sig: '[redacted]',
      'hub.mode': 'subscribe',
      'hub.challenge': 'ch-1',
      'hub.verify_token': '[redacted]',
    });
    expect(request?.redactedQuery).toEqual(['token', 'api_key', 'access_token', 'sig', 'hub.verify_token']);
    const values = Object.fromEntries(request?.headers ?? []);
    for (const name of secretHeaders) expect(values[name], name).toBe('[redacted]');
    for (const name of plainHeaders) expect(values[name], name).toBe('visible');
    expect(request?.redacted).toEqual(secretHeaders);
    const everything = JSON.stringify(polled) + s.logs();
    expect(everything).not.toContain('s3cret');
  });

  it('keeps 64 KB of a body, truncated and flagged as on live endpoints', async () => {
    const s = await server();
    const endpoint = await createKept(s);
    await send(endpoint.url, { method: 'POST', body: 'k'.repeat(100_000) });
    const [request] = (await poll(s.baseUrl, endpoint)).requests;
    expect(request).toMatchObject({ size: 100_000, storedSize: 65_536, truncated: true });
  });

  it('polls after a seq, says when requests were dropped, and takes the key from the header only', async () => {
    const s = await server({ requestsPerEndpoint: 3 });
    const endpoint = await createKept(s);
    for (let i = 1; i <= 5; i++) await send(endpoint.url, { method: 'POST', body: `r${i}` });
    const all = await poll(s.baseUrl, endpoint);
    expect(all.requests.map((request) => request.seq)).toEqual([3, 4, 5]);
    expect(all).toMatchObject({ lastSeq: 5, clearedSeq: 0, gap: true });
    const later = await poll(s.baseUrl, endpoint, 4);
    expect(later.requests.map((request) => request.body)).toEqual(['r5']);
    expect(later.gap).toBe(false);

    const unknown = await send(`${s.baseUrl}/api/endpoints/nope/requests`, { headers: bearer(endpoint) });
    const wrongKey = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests`, {
      headers: { authorization: 'Bearer wrong' },
    });
    const inQuery = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests?key=${endpoint.key}`);
    for (const answer of [unknown, wrongKey, inQuery]) {
      expect(answer.status).toBe(404);
      expect(answer.text).toBe(unknown.text);
    }
    // afterSeq is a whole number written as one, nothing else.
    for (const afterSeq of ['-1', '0x2', '1e1', '', '%20', '1.5']) {
      const answer = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=${afterSeq}`, {
        headers: bearer(endpoint),
      });
      expect([afterSeq, answer.status]).toEqual([afterSeq, 400]);
    }
  });

  it('closes the connection after refusing an API body over its limit, instead of leaving the rest unread', async () => {
    const s = await server();
    const body = `{"kind":"kept","pad":"${'x'.repeat(2_000_000)}"}`;
    const answer = await sendRaw(
      s.baseUrl,
      `POST /api/endpoints HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 400 /);
    expect(answer).toContain('"code":"INVALID_REQUEST"');
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('sets the answer, clears, and deletes over HTTP; watchers hear each, and then it is gone everywhere', async () => {
    const s = await server();
    const endpoint = await createKept(s);
    const watcher = await SocketClient.join(s.wsUrl, endpoint.id, endpoint.key);
    expect(watcher.welcome.endpoint).toMatchObject({ kind: 'kept', expiresAt: endpoint.expiresAt });
    const response = { status: 202, body: 'queued', contentType: 'text/plain' };
    const put = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/response`, {
      method: 'PUT',
      headers: bearer(endpoint),
      body: JSON.stringify(response),
    });
    expect(put.status).toBe(200);
    expect((await watcher.client.next('response')).response).toMatchObject(response);
    const bad = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/response`, {
      method: 'PUT',
      headers: bearer(endpoint),
      body: '{"status":302}',
    });
    expect(JSON.parse(bad.text).error.code).toBe('INVALID_RESPONSE_CONFIG');
    expect((await send(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(202);

    const cleared = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests`, {
      method: 'DELETE',
      headers: bearer(endpoint),
    });
    expect(JSON.parse(cleared.text)).toEqual({ clearedSeq: 1 });
    expect((await watcher.client.next('cleared')).clearedSeq).toBe(1);

    expect(
      (await send(`${s.baseUrl}/api/endpoints/${endpoint.id}`, { method: 'DELETE', headers: bearer(endpoint) })).status,
    ).toBe(204);
    await watcher.client.next('expired');
    expect(await watcher.client.closed).toBe(4004);
    expect((await send(endpoint.url, { method: 'POST' })).status).toBe(404);
    expect(
      (await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests`, { headers: bearer(endpoint) })).status,
    ).toBe(404);
    const rejoin = await SocketClient.open(s.wsUrl);
    rejoin.send({ type: 'join', endpointId: endpoint.id, key: endpoint.key });
    expect(await rejoin.closed).toBe(4004);
  });

  it('expires after KEPT_TTL_MS whether watched or not: 404, and watchers told', async () => {
    const s = await server({ keptTtlMs: 1500, leaseMs: 1200 });
    const created = await SocketClient.open(s.wsUrl);
    created.send({ type: 'create', kind: 'kept' });
    const welcome = await created.next('welcome');
    expect(welcome.endpoint.kind).toBe('kept');
    expect((await send(welcome.endpoint.url, { method: 'POST' })).status).toBe(200);
    await created.next('expired', 5000);
    expect(await created.closed).toBe(4004);
    expect((await send(welcome.endpoint.url, { method: 'POST' })).status).toBe(404);
  });

  it('limits kept endpoints per address and in all, with clear errors', async () => {
    const s = await server({ keptCreatesPerAddress: 2, maxKeptEndpoints: 10 });
    await createKept(s);
    await createKept(s);
    const limited = await send(`${s.baseUrl}/api/endpoints`, { method: 'POST', body: '{"kind":"kept"}' });
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text).error.code).toBe('RATE_LIMITED');

    const full = await server({ keptCreatesPerAddress: 0, maxKeptEndpoints: 1 });
    await createKept(full);
    const refused = await send(`${full.baseUrl}/api/endpoints`, { method: 'POST', body: '{"kind":"kept"}' });
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text).error).toMatchObject({
      code: 'AT_CAPACITY',
      message: expect.stringContaining('1 kept endpoints'),
    });
    const junk = await send(`${full.baseUrl}/api/endpoints`, { method: 'POST', body: '{"kind":"forever"}' });
    expect(JSON.parse(junk.text).error.code).toBe('INVALID_REQUEST');
  });

  it('survives the restart of every instance on Redis', async () => {
    const prefix = testPrefix();
    cleanups.push(async () => {
      const redis = connectRedis();
      await dropPrefix(redis, prefix);
      await redis.quit();
    });
    const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix };
    const first = await startInstance(env);
    const endpoint = await createKept(first);
    await send(`${first.baseUrl}${new URL(endpoint.url).pathname}`, { method: 'POST', body: 'before the restart' });
    await first.stop();
    const second = await startInstance(env);
    cleanups.push(() => second.stop());
    const polled = await poll(second.baseUrl, endpoint);
    expect(polled.requests.map((request) => request.body)).toEqual(['before the restart']);
    expect(
      (await send(`${second.baseUrl}${new URL(endpoint.url).pathname}`, { method: 'POST', body: 'after' })).status,
    ).toBe(200);
  }, 30_000);
});
