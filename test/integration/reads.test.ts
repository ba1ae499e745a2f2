import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, startCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { startInstance, type Instance } from '../helpers/instances.js';
import { SocketClient } from '../helpers/socket-client.js';

interface PollAnswer {
  lastSeq: number;
  clearedSeq: number;
  gap: boolean;
  requests: Array<{ seq: number; body: string }>;
}

/**
 * Finding 1 of the hardening issue: a read (a poll, a join, a resume) never changes stored
 * state, whatever seq it names. Run on the default store, SQLite under DATA_DIR, in a server
 * process of its own.
 */
describe('reads change nothing', () => {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  beforeAll(() => ensureCliBuilt(), 120_000);

  async function keptOnSqlite() {
    const dir = mkdtempSync(join(tmpdir(), 'hookwatch-reads-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const instance: Instance = await startInstance({ DATA_DIR: dir });
    cleanups.push(() => instance.kill());
    const made = await send(`${instance.baseUrl}/api/endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kind":"kept"}',
    });
    const endpoint = JSON.parse(made.text) as { id: string; key: string; url: string };
    const poll = async (query: string) => {
      const answer = await send(`${instance.baseUrl}/api/endpoints/${endpoint.id}/requests?${query}`, {
        headers: { authorization: `Bearer ${endpoint.key}` },
      });
      expect(answer.status).toBe(200);
      return JSON.parse(answer.text) as PollAnswer;
    };
    for (const body of ['one', 'two', 'three'])
      expect((await send(endpoint.url, { method: 'POST', body })).status).toBe(200);
    return { instance, endpoint, poll, link: `${instance.baseUrl}/#${endpoint.id}.${endpoint.key}` };
  }

  it('a poll after a seq the endpoint never gave answers the real last seq and deletes nothing', async () => {
    const { endpoint, poll } = await keptOnSqlite();
    expect(await poll('afterSeq=10')).toMatchObject({ lastSeq: 3, gap: false, requests: [] });
    // Ahead of the endpoint, a long poll answers at once rather than wait for seq 11.
    const started = Date.now();
    expect(await poll('afterSeq=87&waitMs=20000')).toMatchObject({ lastSeq: 3, requests: [] });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await poll('afterSeq=0')).requests.map((request) => request.body)).toEqual(['one', 'two', 'three']);
    expect((await send(endpoint.url, { method: 'POST', body: 'four' })).status).toBe(200);
    const all = await poll('afterSeq=0');
    expect(all.requests.map((request) => request.seq)).toEqual([1, 2, 3, 4]);
    expect(all).toMatchObject({ lastSeq: 4, clearedSeq: 0, gap: false });
  });

  it('a join or a tail --from-seq past the last seq keeps the log, and gets the next request', async () => {
    const { instance, endpoint, poll, link } = await keptOnSqlite();
    const wsUrl = instance.baseUrl.replace(/^http/, 'ws');
    const { client, welcome } = await SocketClient.join(wsUrl, endpoint.id, endpoint.key, 1_000_000);
    cleanups.push(() => client.close());
    expect([welcome.lastSeq, welcome.backlog, welcome.gap]).toEqual([3, 0, false]);
    const tail = startCli(['tail', link, '--json', '--from-seq', '87']);
    cleanups.push(() => tail.stop('SIGKILL'));
    await tail.waitFor('stderr', /watching endpoint/);
    expect((await send(endpoint.url, { method: 'POST', body: 'four' })).status).toBe(200);
    expect((await client.requests(1))[0]).toMatchObject({ seq: 4, body: 'four' });
    const [line] = await tail.waitForLines('stdout', /^\{/, 1);
    expect(JSON.parse(line ?? '{}')).toMatchObject({ seq: 4, body: 'four' });
    // Nobody was told of an eviction, and every request is still stored.
    expect(client.messages.some((message) => message.type === 'evicted')).toBe(false);
    expect((await poll('afterSeq=0')).requests.map((request) => request.seq)).toEqual([1, 2, 3, 4]);
  });
});
