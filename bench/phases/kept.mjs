// @ts-check
// The kept phase (--only=kept): what the embedded store (SQLite under DATA_DIR) costs a capture
// against the same kept endpoint held in memory (DATA_DIR=none), in alternating rounds; and how
// long a restart takes to be ready with 10,000 stored requests.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, sleep } from '../common.mjs';
import { measure } from '../load.mjs';
import { startServer } from '../processes.mjs';

/** @typedef {import('../load.mjs').Run} Run */

/**
 * A kept endpoint on `server`; its receiver URL.
 * @param {import('../processes.mjs').Server} server
 */
async function keptUrl(server) {
  const answer = await fetch(`http://127.0.0.1:${server.port}/api/endpoints`, {
    method: 'POST',
    body: '{"kind":"kept"}',
  });
  return /** @type {{ url: string }} */ (await answer.json()).url;
}

/**
 * Captures into a kept endpoint on each store, `config.rounds` rounds, order alternating.
 * @param {import('../common.mjs').Config} config
 * @param {string} dataDir
 */
async function captureRounds(config, dataDir) {
  /** @type {Record<'memory' | 'sqlite', Run[]>} */
  const lists = { memory: [], sqlite: [] };
  const env = { KEPT_CREATES_PER_ADDRESS: '0', RATE_LIMIT_PER_ENDPOINT: '0', RATE_LIMIT_PER_ADDRESS: '0' };
  const memory = await startServer('hookwatch', { ...env, DATA_DIR: 'none' });
  const sqlite = await startServer('hookwatch', { ...env, DATA_DIR: dataDir });
  const servers = {
    memory: { server: memory, url: await keptUrl(memory) },
    sqlite: { server: sqlite, url: await keptUrl(sqlite) },
  };
  for (let round = 0; round < config.rounds; round++) {
    /** @type {('memory' | 'sqlite')[]} */
    const order = round % 2 === 0 ? ['memory', 'sqlite'] : ['sqlite', 'memory'];
    for (const store of order) {
      const { server, url } = servers[store];
      lists[store].push(
        await measure(server, url, undefined, { label: `kept endpoint, ${store} store`, seconds: config.seconds }),
      );
    }
  }
  memory.child.kill();
  sqlite.child.kill('SIGKILL');
  const summary = (/** @type {Run[]} */ runs) => ({
    cpuMicrosPerRequest: median(runs.map((r) => r.cpuMicrosPerRequest)),
    rps: median(runs.map((r) => r.rps)),
  });
  return {
    memory: summary(lists.memory),
    sqlite: summary(lists.sqlite),
    pairedDifferenceMicros: median(
      lists.sqlite.map((r, i) => r.cpuMicrosPerRequest - lists.memory[i].cpuMicrosPerRequest),
    ),
  };
}

/**
 * 200 kept endpoints with 50 requests each (1 KB bodies), a SIGKILL, and the time from starting
 * the process again to its first ready answer.
 * @param {string} dataDir
 */
async function restartRound(dataDir) {
  // 200 kept endpoints from one address: past the default MAX_KEPT_PER_ADDRESS (20).
  const env = {
    KEPT_CREATES_PER_ADDRESS: '0',
    MAX_KEPT_PER_ADDRESS: '250',
    RATE_LIMIT_PER_ENDPOINT: '0',
    RATE_LIMIT_PER_ADDRESS: '0',
    DATA_DIR: dataDir,
  };
  const filling = await startServer('hookwatch', env);
  const urls = [];
  for (let i = 0; i < 200; i++) urls.push(await keptUrl(filling));
  const body = JSON.stringify({ pad: 'x'.repeat(1000) });
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < urls.length * 50) {
        const url = urls[next++ % urls.length];
        await (await fetch(url, { method: 'POST', body })).arrayBuffer();
      }
    }),
  );
  const metrics = await (await fetch(`http://127.0.0.1:${filling.port}/metrics`)).text();
  const storedBytes = Number(/^hookwatch_stored_bytes (\d+)/m.exec(metrics)?.[1]);
  filling.child.kill('SIGKILL');
  await sleep(200);
  const fileBytes = ['hookwatch.db', 'hookwatch.db-wal']
    .map((name) => sizeOf(join(dataDir, name)))
    .reduce((a, b) => a + b, 0);
  const started = performance.now();
  const restarted = await startServer('hookwatch', env);
  const readyMs = performance.now() - started;
  restarted.child.kill();
  return { requests: urls.length * 50, storedBytes, fileBytes, readyMs };
}

/** @param {string} path */
function sizeOf(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** @param {import('../common.mjs').Config} config */
export async function keptPhase(config) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookwatch-bench-'));
  const restartDir = mkdtempSync(join(tmpdir(), 'hookwatch-bench-restart-'));
  try {
    const capture = await captureRounds(config, dataDir);
    const restart = await restartRound(restartDir);
    return { kept: { capture, restart } };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(restartDir, { recursive: true, force: true });
  }
}

/**
 * The phase's lines in the report.
 * @param {Awaited<ReturnType<typeof keptPhase>>['kept']} kept
 * @param {(n: number, digits?: number) => string} f
 */
export function keptReport(kept, f) {
  const { capture, restart } = kept;
  return {
    lines: [
      `Kept endpoint, 1 KB POSTs, no watcher: in memory ${f(capture.memory.cpuMicrosPerRequest)} µs/req (${f(capture.memory.rps)} req/s), ` +
        `in SQLite ${f(capture.sqlite.cpuMicrosPerRequest)} µs/req (${f(capture.sqlite.rps)} req/s): the write costs ${f(capture.pairedDifferenceMicros)} µs/req (median paired difference).`,
      `Restart with ${restart.requests} stored requests (${f(restart.storedBytes / 1048576, 1)} MiB counted, ${f(restart.fileBytes / 1048576, 1)} MiB on disk after a SIGKILL): ready in ${f(restart.readyMs)} ms.`,
    ],
  };
}
