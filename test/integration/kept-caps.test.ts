import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, type Instance } from '../helpers/instances.js';

/** Finding 10 of the hardening issue: one address cannot take every kept slot or every name that misleads. */
describe('kept endpoints one address may hold, and names no one may take', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it.each([
    ['memory', false],
    ['sqlite', true],
  ])('caps the kept endpoints of one address (%s), and another address still creates', async (_name, onDisk) => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-caps-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const s: Instance = await startInstance({ MAX_KEPT_PER_ADDRESS: '3', ...(onDisk ? { DATA_DIR: dir } : {}) });
    cleanups.push(() => s.kill());
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await create(s, '{"kind":"kept"}', '127.0.0.2'));
    expect(statuses.map((answer) => answer.status)).toEqual([201, 201, 201, 429]);
    expect(statuses[3]?.body).toMatch(/TOO_MANY_KEPT.*3 kept endpoints \(MAX_KEPT_PER_ADDRESS\)/);
    // Live endpoints are bounded by their sockets, not by this cap; another address is not held back.
    expect((await create(s, '{"kind":"live"}', '127.0.0.2')).status).toBe(201);
    expect((await create(s, '{"kind":"kept"}', '127.0.0.3')).status).toBe(201);
    // Deleting one gives its place back.
    const first = JSON.parse(statuses[0]?.body ?? '{}') as { id: string; key: string };
    await fetch(`${s.baseUrl}/api/endpoints/${first.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${first.key}` },
    });
    expect((await create(s, '{"kind":"kept"}', '127.0.0.2')).status).toBe(201);
  });

  it('refuses names that could pass for this service or a provider, in words, and takes one that says whose it is', async () => {
    const s: Instance = await startInstance({});
    cleanups.push(() => s.kill());
    for (const name of ['stripe', 'github', 'admin', 'hookwatch', 'healthz', 'api']) {
      const refused = await create(s, JSON.stringify({ kind: 'kept', name }), '127.0.0.1');
      expect(refused.status, name).toBe(400);
      expect(refused.body).toContain(`the name \\"${name}\\" is reserved`);
    }
    expect((await create(s, '{"kind":"kept","name":"stripe-dev"}', '127.0.0.1')).status).toBe(201);
  });
});

function create(s: Instance, body: string, from: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${s.baseUrl}/api/endpoints`,
      {
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
