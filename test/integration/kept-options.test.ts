import { afterEach, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** Issue #26: the lifetime, name and redaction a kept endpoint's creator picks, and the wait for scripts. */
describe('kept endpoints the user shapes', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function server(overrides: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
    const started = await startServer({ logLevel: 'warn', keptCreatesPerAddress: 0, ...overrides });
    cleanups.push(started.close);
    return started;
  }
  const create = async (s: TestServer, body: unknown) => {
    const answer = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: answer.status,
      body: JSON.parse(answer.text) as {
        id: string;
        key: string;
        url: string;
        expiresAt: string;
        redact?: boolean;
        error?: { code: string; message: string };
      },
    };
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  it('takes a lifetime, a name and the redaction choice, and refuses each bad one with a clear error', async () => {
    const s = await server();
    const made = await create(s, { kind: 'kept', ttlMs: DAY, name: 'github-dev', redact: false });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      id: 'github-dev',
      url: `${s.baseUrl}/api/webhook-endpoint/github-dev`,
      redact: false,
    });
    expect(Math.abs(Date.parse(made.body.expiresAt) - (Date.now() + DAY))).toBeLessThan(5000);
    expect((await create(s, { kind: 'kept' })).body.redact).toBe(true);
    // Names are taken in any case (#34): the id and URL are lower case.
    const upper = await create(s, { kind: 'kept', name: 'Stripe-Dev' });
    expect([upper.status, upper.body.id, upper.body.url]).toEqual([
      201,
      'stripe-dev',
      `${s.baseUrl}/api/webhook-endpoint/stripe-dev`,
    ]);
    expect((await create(s, { kind: 'kept', name: 'STRIPE-DEV' })).body.error?.code).toBe('NAME_TAKEN');

    const refusals: Array<[unknown, number, string]> = [
      [{ kind: 'kept', name: 'github-dev' }, 409, 'NAME_TAKEN'],
      [{ kind: 'kept', name: 'Bad Name' }, 400, 'the name must be 3 to 64 letters, digits and dashes'],
      [{ kind: 'kept', name: 'ab' }, 400, 'the name must be 3 to 64 letters, digits and dashes'],
      [{ kind: 'kept', name: '1abc' }, 400, 'starting with a letter'],
      [{ kind: 'kept', ttlMs: 8 * DAY }, 400, 'ttlMs must be at most 604800000 (KEPT_MAX_TTL_MS)'],
      [{ kind: 'kept', ttlMs: 10 }, 400, 'ttlMs must be at least 60000'],
      [{ kind: 'live', ttlMs: HOUR }, 400, 'apply to kept endpoints only'],
      [{ kind: 'kept', redact: 'no' }, 400, 'redact must be true or false'],
      [{ kind: 'forever' }, 400, 'kind must be "live" or "kept"'],
      [{ kind: 'kept', colour: 'blue' }, 400, 'colour'],
    ];
    for (const [body, status, words] of refusals) {
      const refused = await create(s, body);
      expect([JSON.stringify(body), refused.status]).toEqual([JSON.stringify(body), status]);
      expect(`${refused.body.error?.code}: ${refused.body.error?.message}`).toContain(words);
    }
  });

  it('lets the operator turn names and unredacted storage off', async () => {
    const s = await server({ namedEndpoints: false, allowUnredacted: false });
    expect((await create(s, { kind: 'kept', name: 'my-hook' })).body.error?.message).toContain('NAMED_ENDPOINTS=false');
    expect((await create(s, { kind: 'kept', redact: false })).body.error?.message).toContain('ALLOW_UNREDACTED=false');
    expect((await create(s, { kind: 'kept' })).status).toBe(201);
  });

  it('stores secrets as received on an endpoint created with redact false, and redacted otherwise', async () => {
    const s = await server();
    const clear = (await create(s, { kind: 'kept', redact: false })).body;
    const hidden = (await create(s, { kind: 'kept' })).body;
    for (const endpoint of [clear, hidden])
      await send(`${endpoint.url}?token=t0k`, {
        method: 'POST',
        headers: { authorization: 'Bearer s3cret', 'x-hub-signature-256': 'sha256=abc' },
        body: '{}',
      });
    const headersOf = async (endpoint: { id: string; key: string }) => {
      const log = JSON.parse(
        (await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests`, { headers: bearer(endpoint.key) })).text,
      ) as { requests: Array<{ headers: Array<[string, string]>; url: string }> };
      return log.requests[0];
    };
    expect((await headersOf(clear))?.headers).toContainEqual(['authorization', 'Bearer s3cret']);
    expect((await headersOf(clear))?.url).toContain('token=t0k');
    expect((await headersOf(hidden))?.headers).toContainEqual(['authorization', '[redacted]']);
  });

  it('extends a kept endpoint, tells its watchers, and refuses to extend a live one', async () => {
    const s = await server();
    const kept = (await create(s, { kind: 'kept' })).body;
    const watcher = await SocketClient.join(s.wsUrl, kept.id, kept.key);
    cleanups.push(() => watcher.client.close());
    const extended = await send(`${s.baseUrl}/api/endpoints/${kept.id}/extend`, {
      method: 'POST',
      headers: bearer(kept.key),
      body: JSON.stringify({ ttlMs: 7 * DAY }),
    });
    expect(extended.status).toBe(200);
    const { expiresAt } = JSON.parse(extended.text) as { expiresAt: string };
    expect(Math.abs(Date.parse(expiresAt) - (Date.now() + 7 * DAY))).toBeLessThan(5000);
    expect((await watcher.client.next('extended')).expiresAt).toBe(expiresAt);
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${kept.id}/extend`, {
          method: 'POST',
          headers: bearer(kept.key),
          body: JSON.stringify({ ttlMs: 8 * DAY }),
        })
      ).status,
    ).toBe(400);

    const live = (await create(s, { kind: 'live' })).body;
    const refused = await send(`${s.baseUrl}/api/endpoints/${live.id}/extend`, {
      method: 'POST',
      headers: bearer(live.key),
      body: JSON.stringify({ ttlMs: HOUR }),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('only kept endpoints are extended');
  });

  it('creates a shaped kept endpoint over the socket too', async () => {
    const s = await server();
    const client = await SocketClient.open(s.wsUrl);
    cleanups.push(() => client.close());
    client.send({ type: 'create', kind: 'kept', name: 'from-socket', ttlMs: DAY, redact: false });
    const welcome = await client.next('welcome');
    expect(welcome.endpoint).toMatchObject({ id: 'from-socket', kind: 'kept', redact: false });
    const again = await SocketClient.open(s.wsUrl);
    cleanups.push(() => again.close());
    again.send({ type: 'create', kind: 'kept', name: 'from-socket' });
    expect((await again.next('error')).error.code).toBe('NAME_TAKEN');
    // A taken name is the client's to correct: the socket stays open for another create.
    again.send({ type: 'create', kind: 'kept', name: 'from-socket-2' });
    expect((await again.next('welcome')).endpoint.id).toBe('from-socket-2');
  });

  it('answers a waiting poll as soon as a request is stored, and with nothing after waitMs', async () => {
    const s = await server();
    const kept = (await create(s, { kind: 'kept' })).body;
    const poll = (afterSeq: number, waitMs: number) =>
      send(`${s.baseUrl}/api/endpoints/${kept.id}/requests?afterSeq=${afterSeq}&waitMs=${waitMs}`, {
        headers: bearer(kept.key),
      });

    const started = Date.now();
    const waiting = poll(0, 10_000);
    setTimeout(() => void send(kept.url, { method: 'POST', body: 'woke it' }), 300);
    const answer = JSON.parse((await waiting).text) as { requests: Array<{ seq: number; body: string }> };
    expect(answer.requests.map((request) => request.body)).toEqual(['woke it']);
    expect(Date.now() - started).toBeLessThan(5000);

    const quiet = Date.now();
    const empty = JSON.parse((await poll(1, 400)).text) as { requests: unknown[] };
    expect(empty.requests).toEqual([]);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(350);
    // Already there: no wait at all.
    expect((JSON.parse((await poll(0, 60_000)).text) as { requests: unknown[] }).requests.length).toBe(1);
    expect((await poll(0, 60_001)).status).toBe(400);
    expect(s.app.hub.channelCount()).toBe(0);
  });
});
