import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, root } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { startInstance, type Instance } from '../helpers/instances.js';

const DAY = 24 * 60 * 60 * 1000;

interface Created {
  id: string;
  key: string;
  url: string;
  expiresAt: string;
  redact?: boolean;
}

/** Issue #26: kept endpoints in SQLite under DATA_DIR outlive the process that made them. */
describe('kept endpoints on SQLite (DATA_DIR)', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-data-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const start = async (env: Record<string, string>): Promise<Instance> => {
    const instance = await startInstance(env);
    cleanups.push(() => instance.kill());
    return instance;
  };
  const createKept = async (instance: Instance, body: Record<string, unknown>) => {
    const created = await send(`${instance.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'kept', ...body }),
    });
    return {
      status: created.status,
      body: JSON.parse(created.text) as Created & { error?: { code: string; message: string } },
    };
  };
  const poll = async (instance: Instance, endpoint: Created) => {
    const answer = await send(`${instance.baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=0`, {
      headers: { authorization: `Bearer ${endpoint.key}` },
    });
    return {
      status: answer.status,
      log: JSON.parse(answer.text) as {
        lastSeq: number;
        requests: Array<{ seq: number; body: string; headers: Array<[string, string]>; redacted?: string[] }>;
      },
    };
  };

  it('keeps a named kept endpoint, its request and its unredacted signature across a SIGKILL and a restart', async () => {
    const dir = dataDir();
    const first = await start({ DATA_DIR: dir });
    const { status, body: endpoint } = await createKept(first, { name: 'stripe-dev', ttlMs: 7 * DAY, redact: false });
    expect(status).toBe(201);
    expect(endpoint.id).toBe('stripe-dev');
    expect(endpoint.url).toBe(`${first.baseUrl}/api/webhook-endpoint/stripe-dev`);
    expect(endpoint.redact).toBe(false);
    expect(Date.parse(endpoint.expiresAt) - Date.now()).toBeGreaterThan(7 * DAY - 60_000);

    // A Stripe-signed event (Stripe's documented scheme: t=<time>,v1=HMAC-SHA256("<t>.<body>")).
    const payload = JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${createHmac('sha256', 'whsec_test').update(`${t}.${payload}`).digest('hex')}`;
    expect(
      (
        await send(`${endpoint.url}/stripe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          body: payload,
        })
      ).status,
    ).toBe(200);
    await first.kill();

    const second = await start({ DATA_DIR: dir });
    const { status: polled, log } = await poll(second, endpoint);
    expect(polled).toBe(200);
    expect(log.requests.map((request) => request.body)).toEqual([payload]);
    expect(log.requests[0]?.headers).toContainEqual(['stripe-signature', signature]);
    expect(log.requests[0]?.redacted ?? []).toEqual([]);
    // Still answering, numbering on from where it was.
    expect(
      (await send(`${second.baseUrl}/api/webhook-endpoint/stripe-dev`, { method: 'POST', body: 'again' })).status,
    ).toBe(200);
    expect((await poll(second, endpoint)).log.lastSeq).toBe(2);
    // The name stays taken while the endpoint lives.
    const taken = await createKept(second, { name: 'stripe-dev' });
    expect(taken.status).toBe(409);
    expect(taken.body.error?.code).toBe('NAME_TAKEN');
  }, 60_000);

  it('refuses a second process on the same DATA_DIR with a message that says why', async () => {
    const dir = dataDir();
    await start({ DATA_DIR: dir });
    await ensureCliBuilt();
    const second = spawnSync(process.execPath, [join(root, 'dist', 'main.js')], {
      env: { ...process.env, REDIS_URL: '', DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`DATA_DIR ${join(dir, 'hookwatch.db')} is in use by another Hookwatch process`);
  }, 30_000);

  it('names the path and the cause when DATA_DIR cannot be made', async () => {
    const dir = dataDir();
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, '');
    await ensureCliBuilt();
    const started = spawnSync(process.execPath, [join(root, 'dist', 'main.js')], {
      env: { ...process.env, REDIS_URL: '', DATA_DIR: join(file, 'data'), PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(started.status).toBe(1);
    expect(started.stderr).toMatch(/cannot open the SQLite database at .*not-a-folder\/data\/hookwatch\.db: ENOTDIR/);
  }, 30_000);

  it('answers 503 STORE_UNAVAILABLE when the disk is full, and keeps serving what it holds', async (context) => {
    // A 1 MiB file system of its own (needs root, as CI and this project's machines have).
    const dir = dataDir();
    const mount = join(dir, 'small');
    mkdirSync(mount);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
    if (mounted.status !== 0) return context.skip('cannot mount a small tmpfs here (not root)');
    cleanups.push(() => void spawnSync('umount', ['-l', mount]));
    const instance = await start({ DATA_DIR: mount, MAX_DISK_BYTES: String(64 * 1024 * 1024) });
    const { body: endpoint } = await createKept(instance, {});
    const statuses: number[] = [];
    const body = Buffer.alloc(60 * 1024, 'x');
    for (let i = 0; i < 40 && !statuses.includes(503); i++)
      statuses.push((await send(endpoint.url, { method: 'POST', body })).status);
    expect(statuses).toContain(503);
    const refused = statuses.indexOf(503);
    expect(statuses.slice(0, refused).every((status) => status === 200)).toBe(true);
    // What was stored before the disk filled is still there, numbered without a hole.
    const { log } = await poll(instance, endpoint);
    expect(log.requests.map((request) => request.seq)).toEqual(Array.from({ length: refused }, (_, i) => i + 1));
  }, 60_000);
});
