import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CloseCode, type EndpointInfo } from '../../src/shared/protocol.js';
import { SocketClient } from '../helpers/socket-client.js';
import { startServer, type TestServer } from '../helpers/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef01';
/** One character off a real token, and one nobody ever had: both must get the same answer. */
const WRONG = `${ALICE.slice(0, -1)}0`;
const UNKNOWN = 'never-issued-token-0123456789';

const withToken = (token: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: {
    'content-type': 'application/json',
    ...(token === undefined ? {} : { 'x-hookwatch-token': token }),
    ...(init.headers as Record<string, string> | undefined),
  },
});

async function create(
  server: TestServer,
  token: string | undefined,
  body: unknown = { kind: 'kept' },
): Promise<Response> {
  return fetch(`${server.baseUrl}/api/endpoints`, withToken(token, { method: 'POST', body: JSON.stringify(body) }));
}

describe('ACCESS_MODE=token', () => {
  let server: TestServer;
  let kept: EndpointInfo;
  beforeAll(async () => {
    server = await startServer({ accessMode: 'token', accessTokens: parseTokens(`alice:${ALICE},${BOB}`) });
    const answer = await create(server, ALICE);
    expect(answer.status).toBe(201);
    kept = (await answer.json()) as EndpointInfo;
  });
  afterAll(() => server.close());

  it('refuses every call of the endpoints API without a valid token: 401, one body for missing, unknown and wrong tokens', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/api/endpoints', { kind: 'kept' }],
      ['GET', `/api/endpoints/${kept.id}/requests?afterSeq=0`],
      ['PUT', `/api/endpoints/${kept.id}/response`, { status: 201 }],
      ['DELETE', `/api/endpoints/${kept.id}/requests`],
      ['POST', `/api/endpoints/${kept.id}/extend`, { ttlMs: 600_000 }],
      ['DELETE', `/api/endpoints/${kept.id}`],
      ['GET', '/api/endpoints'],
    ];
    for (const [method, path, body] of calls) {
      const bodies = new Set<string>();
      for (const token of [undefined, UNKNOWN, WRONG, '', 'x'.repeat(5000)]) {
        const answer = await fetch(
          `${server.baseUrl}${path}`,
          withToken(token, {
            method,
            headers: { authorization: `Bearer ${kept.key}` },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }),
        );
        expect(answer.status, `${method} ${path}`).toBe(401);
        bodies.add(await answer.text());
      }
      expect(bodies.size, `${method} ${path}`).toBe(1);
      const error = JSON.parse([...bodies][0] as string) as { error: { code: string; message: string } };
      expect(error.error.code).toBe('UNAUTHORIZED');
      expect(error.error.message).toMatch(/X-Hookwatch-Token/);
    }
    // Nothing was changed by the refused calls: the endpoint is there with its answer.
    const poll = await fetch(
      `${server.baseUrl}/api/endpoints/${kept.id}/requests`,
      withToken(ALICE, { headers: { authorization: `Bearer ${kept.key}` } }),
    );
    expect(poll.status).toBe(200);
  });

  it('lets a valid token create, poll and configure; the receiver URL stays public', async () => {
    const captured = await fetch(kept.url, { method: 'POST', body: 'hello' });
    expect(captured.status).toBe(200);
    const poll = await fetch(
      `${server.baseUrl}/api/endpoints/${kept.id}/requests?afterSeq=0`,
      withToken(BOB, { headers: { authorization: `Bearer ${kept.key}` } }),
    );
    expect(poll.status).toBe(200);
    expect(((await poll.json()) as { requests: unknown[] }).requests).toHaveLength(1);
    const set = await fetch(
      `${server.baseUrl}/api/endpoints/${kept.id}/response`,
      withToken(ALICE, {
        method: 'PUT',
        headers: { authorization: `Bearer ${kept.key}` },
        body: JSON.stringify({ status: 202 }),
      }),
    );
    expect(set.status).toBe(200);
    expect((await fetch(kept.url)).status).toBe(202);
  });

  it('a share link alone no longer watches: the socket needs the token in its first message', async () => {
    for (const token of [undefined, UNKNOWN, WRONG]) {
      const client = await SocketClient.open(server.wsUrl);
      client.send({ type: 'join', endpointId: kept.id, key: kept.key, ...(token === undefined ? {} : { token }) });
      const error = await client.next('error');
      expect(error.error.code).toBe('UNAUTHORIZED');
      expect(error.for).toBe('join');
      expect(await client.closed).toBe(CloseCode.UNAUTHORIZED);
    }
    const creator = await SocketClient.open(server.wsUrl);
    creator.send({ type: 'create' });
    expect((await creator.next('error')).error.code).toBe('UNAUTHORIZED');
    expect(await creator.closed).toBe(CloseCode.UNAUTHORIZED);

    const joined = await SocketClient.open(server.wsUrl);
    joined.send({ type: 'join', endpointId: kept.id, key: kept.key, token: BOB });
    expect((await joined.next('welcome')).endpoint.id).toBe(kept.id);
    await joined.close();
  });

  it('answers a malformed token in a socket message as a bad message, and a huge one without reading it as a token', async () => {
    const client = await SocketClient.open(server.wsUrl);
    for (const token of ['x'.repeat(1025), 12345, null, { nested: { deeper: [ALICE] } }]) {
      client.send({ type: 'join', endpointId: kept.id, key: kept.key, token } as Record<string, unknown>);
      const error = await client.next('error');
      expect(error.error.code, JSON.stringify(token).slice(0, 40)).toBe('BAD_MESSAGE');
      expect(error.error.message).toMatch(/token/);
    }
    // Still open, and a good token still works on it.
    client.send({ type: 'join', endpointId: kept.id, key: kept.key, token: ALICE });
    expect((await client.next('welcome')).endpoint.id).toBe(kept.id);
    await client.close();
  });

  it('the creator opens its own endpoint without the key; another user needs it', async () => {
    const own = await fetch(`${server.baseUrl}/api/endpoints`, withToken(ALICE));
    expect(own.status).toBe(200);
    const listed = (await own.json()) as { user: string; endpoints: Array<{ id: string; key?: string }> };
    expect(listed.user).toBe('alice');
    expect(listed.endpoints.map((endpoint) => endpoint.id)).toContain(kept.id);
    expect(listed.endpoints.every((endpoint) => endpoint.key === undefined)).toBe(true);
    expect((await fetch(`${server.baseUrl}/api/endpoints/${kept.id}/requests`, withToken(ALICE))).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/api/endpoints/${kept.id}/requests`, withToken(BOB))).status).toBe(404);
  });

  it('logs creations with the user and never a token or a key', async () => {
    const answer = await create(server, ALICE);
    const made = (await answer.json()) as EndpointInfo;
    const logs = server.logs();
    expect(logs).toMatch(new RegExp(`"endpointId":"${made.id}"[^\\n]*"user":"alice"[^\\n]*endpoint created`));
    for (const secret of [ALICE, BOB, WRONG, UNKNOWN, made.key]) expect(logs).not.toContain(secret);
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/hookwatch_endpoints_created_total\{kind="kept",mode="token"\} [1-9]/);
  });

  it('tells the page the mode and whether its token works, the same for unknown and wrong ones', async () => {
    const ask = async (token?: string) => (await fetch(`${server.baseUrl}/api/access`, withToken(token))).json();
    expect(await ask()).toEqual({ mode: 'token', user: null });
    expect(await ask(WRONG)).toEqual({ mode: 'token', user: null });
    expect(await ask(UNKNOWN)).toEqual({ mode: 'token', user: null });
    expect(await ask(ALICE)).toEqual({ mode: 'token', user: 'alice' });
  });
});

describe('ACCESS_MODE=token: per-user caps', () => {
  let server: TestServer | undefined;
  afterEach(() => server?.close());

  it('counts creations and kept endpoints per user, not per address', async () => {
    server = await startServer({
      accessMode: 'token',
      accessTokens: parseTokens(`alice:${ALICE},bob:${BOB}`),
      keptCreatesPerAddress: 1,
      keptCreatesPerUser: 3,
      maxKeptPerUser: 2,
    });
    // Two users from one address each have their own count: the address cap of 1 does not apply.
    expect((await create(server, ALICE)).status).toBe(201);
    expect((await create(server, BOB)).status).toBe(201);
    expect((await create(server, ALICE)).status).toBe(201);
    const third = await create(server, ALICE);
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe('TOO_MANY_KEPT');
    const fourth = await create(server, ALICE);
    expect(fourth.status).toBe(429);
    expect(((await fourth.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
  });
});

describe('ACCESS_TOKENS_FILE reloaded on SIGHUP, on a real server process', () => {
  let child: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-tokens-'));
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a removed token stops working for new calls at once and closes its open sockets within a heartbeat', async () => {
    const file = join(dir, 'tokens');
    writeFileSync(file, `# who may use this instance\nalice:${ALICE}\nbob:${BOB}\n`);
    const started = await startProcess({
      ACCESS_MODE: 'token',
      ACCESS_TOKENS_FILE: file,
      HEARTBEAT_MS: '1000',
      DATA_DIR: 'none',
    });
    child = started.child;
    const base = `http://127.0.0.1:${started.port}`;
    const ws = `ws://127.0.0.1:${started.port}`;

    const bob = await SocketClient.open(ws);
    bob.send({ type: 'create', token: BOB });
    const welcome = await bob.next('welcome');
    const alice = await SocketClient.open(ws);
    alice.send({ type: 'join', endpointId: welcome.endpoint.id, key: welcome.endpoint.key, token: ALICE });
    await alice.next('welcome');

    writeFileSync(file, `alice:${ALICE}\n`);
    const reloaded = waitFor(started.output, /access tokens reloaded/);
    child.kill('SIGHUP');
    await reloaded;
    const sentAt = Date.now();
    expect((await fetch(`${base}/api/access`, withToken(BOB)).then((answer) => answer.json())) as unknown).toEqual({
      mode: 'token',
      user: null,
    });
    expect((await fetch(`${base}/api/endpoints`, withToken(BOB))).status).toBe(401);

    const error = await bob.next('error', 5000);
    expect(error.error.code).toBe('UNAUTHORIZED');
    expect(await bob.closed).toBe(CloseCode.UNAUTHORIZED);
    // Within a heartbeat (1 s) of the reload, with room for a slow machine.
    expect(Date.now() - sentAt).toBeLessThan(2500);
    // Alice's token stays: her socket still watches, and the endpoint still captures.
    expect((await fetch(welcome.endpoint.url, { method: 'POST', body: 'still here' })).status).toBe(200);
    expect((await alice.requests(1))[0]?.body).toBe('still here');

    // A file that cannot be parsed keeps the tokens as they were.
    writeFileSync(file, 'short\n');
    const refused = waitFor(started.output, /access tokens not reloaded/);
    child.kill('SIGHUP');
    await refused;
    expect(started.output()).not.toContain('short');
    expect((await fetch(`${base}/api/access`, withToken(ALICE)).then((answer) => answer.json())) as unknown).toEqual({
      mode: 'token',
      user: 'alice',
    });
    for (const secret of [ALICE, BOB]) expect(started.output()).not.toContain(secret);
    await alice.close();
  });

  it('refuses to start in token mode without tokens, naming the setting', async () => {
    const run = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, REDIS_URL: '', ACCESS_MODE: 'token' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/ACCESS_MODE=token needs ACCESS_TOKENS or ACCESS_TOKENS_FILE/);
  });
});

/** Tokens as loadConfig parses ACCESS_TOKENS. */
function parseTokens(text: string) {
  return loadConfig({ ACCESS_TOKENS: text }, []).access.accessTokens;
}

/** Resolves when the process's output matches, or fails after 10 s. */
function waitFor(output: () => string, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (pattern.test(output())) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > 10_000) {
        clearInterval(timer);
        reject(new Error(`no ${pattern} in the output within 10 s:\n${output()}`));
      }
    }, 20);
  });
}

/** src/main.ts as its own process, as `npm start` runs it; resolves once it listens. */
async function startProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, REDIS_URL: '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => output, /listening at http:\/\/127\.0\.0\.1:\d+/);
  const port = Number(/listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
  return { child, port, output: () => output };
}
