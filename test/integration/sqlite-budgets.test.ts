import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { startInstance, type Instance } from '../helpers/instances.js';

const MIB = 1024 * 1024;
const json = { 'content-type': 'application/json' };

/** Findings 9 and 15 of the hardening issue, on SQLite (under DATA_DIR) in a server process. */
describe('the SQLite store within its budgets', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-budget-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const start = async (env: Record<string, string>) => {
    const instance: Instance = await startInstance(env);
    cleanups.push(() => instance.kill());
    return instance;
  };
  const createKept = async (s: Instance) =>
    JSON.parse(
      (await send(`${s.baseUrl}/api/endpoints`, { method: 'POST', headers: json, body: '{"kind":"kept"}' })).text,
    ) as { id: string; key: string; url: string };

  it('9: response configurations count against MAX_RESPONSE_CONFIG_BYTES, and one past it is refused with 503 (nothing changes)', async () => {
    const s = await start({ DATA_DIR: dataDir(), MAX_RESPONSE_CONFIG_BYTES: String(MIB), MAX_DISK_BYTES: String(MIB) });
    // About 360 KB each: a body and five rules with bodies near the 64 KB cap.
    const big = 'b'.repeat(60 * 1024);
    const config = {
      status: 200,
      body: big,
      contentType: 'text/plain',
      rules: Array.from({ length: 5 }, (_, i) => ({ when: { path: `/r${i}` }, answer: { body: big } })),
    };
    const statuses: number[] = [];
    const endpoints = [];
    for (let i = 0; i < 4; i++) {
      const e = await createKept(s);
      endpoints.push(e);
      statuses.push(
        (
          await send(`${s.baseUrl}/api/endpoints/${e.id}/response`, {
            method: 'PUT',
            headers: { ...json, authorization: `Bearer ${e.key}` },
            body: JSON.stringify(config),
          })
        ).status,
      );
    }
    expect(statuses).toEqual([200, 200, 503, 503]);
    // The refused ones still answer with what they had, and a capture on a cached configuration answers with it.
    expect((await send(endpoints[3]?.url ?? '', { method: 'POST' })).text).toBe('{"ok":true}');
    expect((await send(`${endpoints[0]?.url ?? ''}/r2`, { method: 'POST' })).text).toBe(big);
    // A smaller configuration replaces a large one, and frees its room.
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${endpoints[0]?.id}/response`, {
          method: 'PUT',
          headers: { ...json, authorization: `Bearer ${endpoints[0]?.key}` },
          body: '{"status":202}',
        })
      ).status,
    ).toBe(200);
    expect((await send(endpoints[0]?.url ?? '', { method: 'POST' })).status).toBe(202);
    expect(
      (
        await send(`${s.baseUrl}/api/endpoints/${endpoints[2]?.id}/response`, {
          method: 'PUT',
          headers: { ...json, authorization: `Bearer ${endpoints[2]?.key}` },
          body: JSON.stringify(config),
        })
      ).status,
    ).toBe(200);
  });

  it.skipIf(process.getuid?.() !== 0)(
    '15: on a full disk, deleting an endpoint still works, also after a restart',
    async () => {
      const dir = dataDir();
      // A 16 MiB disk of its own (CI runs as root, as this needs).
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir]);
      cleanups.push(() => execFileSync('umount', ['-l', dir]));
      const env = { DATA_DIR: dir, MAX_DISK_BYTES: String(256 * MIB), MAX_KEPT_PER_ADDRESS: '250' };
      let s = await start(env);
      const endpoints = [];
      const body = Buffer.alloc(60 * 1024, 0x61);
      let full = false;
      for (let i = 0; i < 40 && !full; i++) {
        const e = await createKept(s);
        if (!e.id) break;
        endpoints.push(e);
        for (let n = 0; n < 50; n++) {
          const status = (await send(e.url, { method: 'POST', body })).status;
          if (status === 503) {
            full = true;
            break;
          }
          expect(status).toBe(200);
        }
      }
      expect(full).toBe(true);
      const remove = (server: Instance, e: { id: string; key: string }) =>
        send(`${server.baseUrl}/api/endpoints/${e.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${e.key}` },
        });
      expect((await remove(s, endpoints[0] as { id: string; key: string })).status).toBe(204);
      const before = s.baseUrl;
      await s.kill();
      s = await start(env);
      expect((await remove(s, endpoints[1] as { id: string; key: string })).status).toBe(204);
      // What was freed takes new captures again.
      const last = endpoints.at(-1) as { url: string };
      expect((await send(last.url.replace(before, s.baseUrl), { method: 'POST', body: 'room again' })).status).toBe(
        200,
      );
    },
    120_000,
  );
});
