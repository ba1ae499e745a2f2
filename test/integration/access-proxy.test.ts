import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { defaultConfig } from '../../src/config.js';
import { createEndpoint } from '../../src/endpoints/endpoint-records.js';
import { LIVE_PATH, SUBPROTOCOL, type EndpointInfo, type ServerMessage } from '../../src/shared/protocol.js';
import { createStoreByKind } from '../../src/one-process/store-by-kind.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { createRedisStore } from '../../src/redis/store.js';
import { openDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore } from '../../src/one-process/sqlite-store.js';
import { storeLimits, type Store } from '../../src/store/store.js';
import { connectRedis, dropPrefix, testPrefix } from '../helpers/redis.js';
import { sendRaw } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

const USER_HEADER = 'x-forwarded-email';
const as = (user: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: {
    'content-type': 'application/json',
    ...(user === undefined ? {} : { [USER_HEADER]: user }),
    ...(init.headers as Record<string, string> | undefined),
  },
});

/** Opens a live socket with these handshake headers: its first message, or the HTTP status it was refused with. */
function openSocket(
  server: TestServer,
  headers: Record<string, string>,
  first: unknown,
): Promise<{ status: number; body: string } | { message: ServerMessage; socket: WebSocket }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.wsUrl}${LIVE_PATH}`, [SUBPROTOCOL], { headers });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('open', () => socket.send(JSON.stringify(first)));
    socket.once('message', (data) => resolve({ message: JSON.parse(data.toString()) as ServerMessage, socket }));
    socket.once('error', (error) => (error.message.includes('Unexpected server response') ? undefined : reject(error)));
    setTimeout(() => reject(new Error('no answer within 3 s')), 3000).unref();
  });
}

describe('ACCESS_MODE=proxy behind a trusted proxy (127.0.0.1)', () => {
  let server: TestServer;
  let kept: EndpointInfo;
  beforeAll(async () => {
    server = await startServer({ accessMode: 'proxy', trustProxy: ['127.0.0.1'], accessUserHeader: USER_HEADER });
    const answer = await fetch(
      `${server.baseUrl}/api/endpoints`,
      as('ada@example.com', { method: 'POST', body: JSON.stringify({ kind: 'kept' }) }),
    );
    expect(answer.status).toBe(201);
    kept = (await answer.json()) as EndpointInfo;
  });
  afterAll(() => server.close());

  it('refuses every call without a signed-in user, 401 with the same body, and the receiver still captures', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/endpoints', { kind: 'kept' }],
      ['GET', `/api/endpoints/${kept.id}/requests`],
      ['PUT', `/api/endpoints/${kept.id}/response`, { status: 201 }],
      ['DELETE', `/api/endpoints/${kept.id}`],
      ['GET', '/api/endpoints'],
    ];
    const bodies = new Set<string>();
    for (const [method, path, body] of calls) {
      for (const user of [undefined, '', '   ', 'x'.repeat(300)]) {
        const answer = await fetch(
          `${server.baseUrl}${path}`,
          as(user, {
            method,
            headers: { authorization: `Bearer ${kept.key}` },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }),
        );
        expect(answer.status, `${method} ${path} as ${JSON.stringify(user)}`).toBe(401);
        bodies.add(await answer.text());
      }
    }
    expect(bodies.size).toBe(1);
    expect(JSON.parse([...bodies][0] as string)).toEqual({
      error: { code: 'UNAUTHORIZED', message: expect.stringMatching(/sign-in proxy/) as unknown },
    });

    const refused = await openSocket(server, {}, { type: 'create' });
    expect(refused).toEqual({ status: 401, body: [...bodies][0] });

    // The user header twice (a client's own line beside the proxy's): Node joins them into one
    // value ("victim, me"), which must not pass for a user.
    const twice = await sendRaw(
      server.baseUrl,
      `GET /api/endpoints HTTP/1.1\r\nHost: x\r\n${USER_HEADER}: ada@example.com\r\n${USER_HEADER}: me@example.com\r\nConnection: close\r\n\r\n`,
    );
    expect(twice).toMatch(/^HTTP\/1.1 401 /);

    expect((await fetch(kept.url, { method: 'POST', body: 'from a sender' })).status).toBe(200);
    const poll = await fetch(`${server.baseUrl}/api/endpoints/${kept.id}/requests`, as('ada@example.com'));
    expect(
      ((await poll.json()) as { requests: Array<{ body: string }> }).requests.map((request) => request.body),
    ).toEqual(['from a sender']);
  });

  it("lists the caller's own endpoints, which their creator opens without the key, from the API and the socket", async () => {
    const live = await openSocket(server, { [USER_HEADER]: 'ada@example.com' }, { type: 'create' });
    if (!('message' in live) || live.message.type !== 'welcome') throw new Error(`no welcome: ${JSON.stringify(live)}`);
    const mine = (await (await fetch(`${server.baseUrl}/api/endpoints`, as('ada@example.com'))).json()) as {
      user: string;
      endpoints: Array<Record<string, unknown>>;
    };
    expect(mine.user).toBe('ada@example.com');
    expect(mine.endpoints.map((endpoint) => endpoint.id)).toEqual([kept.id, live.message.endpoint.id]);
    expect(mine.endpoints.every((endpoint) => !('key' in endpoint) && typeof endpoint.url === 'string')).toBe(true);
    const theirs = (await (await fetch(`${server.baseUrl}/api/endpoints`, as('bob@example.com'))).json()) as {
      endpoints: unknown[];
    };
    expect(theirs.endpoints).toEqual([]);

    // Another browser of the same user joins without the key; another user cannot.
    const again = await openSocket(server, { [USER_HEADER]: 'ada@example.com' }, { type: 'join', endpointId: kept.id });
    expect('message' in again && again.message.type === 'welcome' && again.message.endpoint.key).toBe('');
    const stranger = await openSocket(
      server,
      { [USER_HEADER]: 'bob@example.com' },
      { type: 'join', endpointId: kept.id },
    );
    expect('message' in stranger && stranger.message.type === 'error' && stranger.message.error.code).toBe(
      'ENDPOINT_NOT_FOUND',
    );
    expect((await fetch(`${server.baseUrl}/api/endpoints/${kept.id}/requests`, as('bob@example.com'))).status).toBe(
      404,
    );
    // With the key, anyone signed in may watch: a share link still works between colleagues.
    expect(
      (
        await fetch(
          `${server.baseUrl}/api/endpoints/${kept.id}/requests`,
          as('bob@example.com', { headers: { authorization: `Bearer ${kept.key}` } }),
        )
      ).status,
    ).toBe(200);
    for (const opened of [live, again, stranger]) if ('socket' in opened) opened.socket.close();
  });

  it('logs creations and deletions with the user, and counts them by mode', async () => {
    const made = (await (
      await fetch(`${server.baseUrl}/api/endpoints`, as('cy@example.com', { method: 'POST', body: '{"kind":"kept"}' }))
    ).json()) as EndpointInfo;
    expect(
      (await fetch(`${server.baseUrl}/api/endpoints/${made.id}`, as('cy@example.com', { method: 'DELETE' }))).status,
    ).toBe(204);
    const logs = server.logs();
    expect(logs).toMatch(new RegExp(`"endpointId":"${made.id}"[^\\n]*"user":"cy@example.com"[^\\n]*endpoint created`));
    expect(logs).toMatch(new RegExp(`"endpointId":"${made.id}"[^\\n]*"user":"cy@example.com"[^\\n]*endpoint deleted`));
    expect(logs).not.toContain(made.key);
    expect(await (await fetch(`${server.baseUrl}/metrics`)).text()).toMatch(
      /hookwatch_endpoints_created_total\{kind="kept",mode="proxy"\} [1-9]/,
    );
  });
});

describe('ACCESS_MODE=proxy: the user header from an address that is not the proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ accessMode: 'proxy', trustProxy: ['10.9.8.7'], accessUserHeader: USER_HEADER });
  });
  afterAll(() => server.close());

  it('is not believed: 401 for creating, polling, configuring, listing and the socket', async () => {
    for (const [method, path] of [
      ['POST', '/api/endpoints'],
      ['GET', '/api/endpoints/abc/requests'],
      ['PUT', '/api/endpoints/abc/response'],
      ['GET', '/api/endpoints'],
    ] as const) {
      const answer = await fetch(
        `${server.baseUrl}${path}`,
        as('ada@example.com', { method, ...(method === 'GET' ? {} : { body: '{}' }) }),
      );
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    const refused = await openSocket(server, { [USER_HEADER]: 'ada@example.com' }, { type: 'create' });
    expect('status' in refused && refused.status).toBe(401);
    expect(await (await fetch(`${server.baseUrl}/api/access`, as('ada@example.com'))).json()).toEqual({
      mode: 'proxy',
      user: null,
    });
  });
});

describe('proxy mode needs TRUST_PROXY', () => {
  it('refuses to start without it, naming both settings', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ ACCESS_MODE: 'proxy' }, [])).toThrow(/ACCESS_MODE=proxy needs TRUST_PROXY/);
  });
});

/** Every backend keeps an endpoint's creator and lists a creator's living endpoints. */
describe.each<[string, () => Promise<{ store: Store; close: () => Promise<void> }>]>([
  [
    'memory',
    async () => ({
      store: createMemoryStore({ ...storeLimits(defaultConfig()), bus: createMemoryBus() }),
      close: async () => undefined,
    }),
  ],
  [
    'one process (memory + SQLite)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hookwatch-creator-'));
      const db = openDatabase(dir);
      const bus = createMemoryBus();
      const limits = storeLimits(defaultConfig());
      const store = createStoreByKind({
        live: createMemoryStore({ ...limits, bus }),
        kept: createSqliteStore({ ...limits, maxDiskBytes: limits.maxStoredBytes, db, bus }),
      });
      return { store, close: async () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  ],
  [
    'redis',
    async () => {
      const redis = connectRedis();
      const prefix = testPrefix();
      const store = createRedisStore({ ...storeLimits(defaultConfig()), redis, prefix, commandTimeoutMs: 2000 });
      return { store, close: async () => (await dropPrefix(redis, prefix), redis.disconnect()) };
    },
  ],
])('the %s store', (_name, open) => {
  it("keeps the creator and lists a creator's living endpoints, oldest first, without the deleted", async () => {
    const { store, close } = await open();
    try {
      const config = defaultConfig();
      const made = [];
      for (const [kind, creator] of [
        ['kept', 'ada'],
        ['live', 'ada'],
        ['kept', 'bob'],
        ['kept', 'ada'],
        ['kept', undefined],
      ] as const) {
        const created = await createEndpoint(
          store,
          config,
          { kind, ...(creator ? { creator } : {}) },
          Date.now() + made.length,
        );
        if (typeof created === 'string') throw new Error(created);
        made.push(created.endpoint);
      }
      expect((await store.getEndpoint(made[0]!.id))?.creator).toBe('ada');
      expect((await store.listEndpoints('ada')).map((endpoint) => endpoint.id)).toEqual([
        made[0]!.id,
        made[1]!.id,
        made[3]!.id,
      ]);
      expect(await store.deleteEndpoint(made[3]!.id)).toBe(true);
      expect((await store.listEndpoints('ada')).map((endpoint) => endpoint.id)).toEqual([made[0]!.id, made[1]!.id]);
      expect((await store.listEndpoints('bob')).map((endpoint) => endpoint.creator)).toEqual(['bob']);
      expect(await store.listEndpoints('nobody')).toEqual([]);
    } finally {
      await close();
    }
  });
});
