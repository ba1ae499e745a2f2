// @ts-check
// The shards phase (--only=redis --shards=N): what Redis spends per captured request on one
// node and on an N-master Cluster, with the load spread over 120 endpoints (each watched by its
// own socket on instance B, sent to instance A). On the Cluster every endpoint's keys and
// channel sit in one slot and messages use sharded pub/sub, so a message is copied within the
// shard that owns the endpoint only: the sum of the shards' CPU per request should stay near
// the one node's. Private redis-server processes on free loopback ports; every phase bounded.
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { median, sleep } from '../common.mjs';
import { startServer, startWatcher, track } from '../processes.mjs';
import { cpuTimes, freePort } from '../server-env.mjs';

const ENDPOINTS = 120;
const CONCURRENCY = 40;
const run = promisify(execFile);

/**
 * A redis-server on a free port; `cluster`: as a cluster node.
 * @param {string} dir
 * @param {boolean} cluster
 */
async function redisNode(dir, cluster) {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  if (cluster)
    args.push(
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-port',
      String(await freePort()),
    );
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  track(child);
  for (let attempt = 0; ; attempt++) {
    const client = new Redis(port, '127.0.0.1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    client.on('error', () => undefined);
    const pong = await client.connect().then(
      () => client.ping(),
      () => undefined,
    );
    client.disconnect();
    if (pong === 'PONG') break;
    if (attempt > 100) throw new Error('redis-server did not start');
    await sleep(50);
  }
  return { port, pid: /** @type {number} */ (child.pid), child };
}

/**
 * One Redis node (shards 1) or a Cluster of `shards` masters, with the environment an instance needs.
 * @param {number} shards
 */
async function startRedis(shards) {
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-bench-shards-'));
  const nodes = await Promise.all(Array.from({ length: shards }, () => redisNode(dir, shards > 1)));
  if (shards > 1) {
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const node of nodes) {
      for (let attempt = 0; ; attempt++) {
        const { stdout } = await run('redis-cli', ['-p', String(node.port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (attempt > 100) throw new Error('cluster not ready');
        await sleep(100);
      }
    }
  }
  const env =
    shards > 1
      ? { REDIS_CLUSTER_NODES: nodes.map((node) => `127.0.0.1:${node.port}`).join(',') }
      : { REDIS_URL: `redis://127.0.0.1:${nodes[0]?.port}` };
  return {
    env: { ...env, REDIS_PREFIX: 'hookwatch-bench:' },
    pids: nodes.map((node) => node.pid),
    stop: () => {
      for (const node of nodes) node.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * POSTs 1 KB JSON bodies round-robin over `urls` from CONCURRENCY keep-alive loops for `seconds`.
 * @param {string[]} urls
 * @param {number} seconds
 */
async function spreadLoad(urls, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ pad: 'x'.repeat(1000) });
  const until = performance.now() + seconds * 1000;
  let next = 0;
  let sent = 0;
  let failed = 0;
  const post = (/** @type {string} */ url) =>
    new Promise((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('error', () => resolve(false));
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        if (await post(/** @type {string} */ (urls[next++ % urls.length]))) sent++;
        else failed++;
      }
    }),
  );
  agent.destroy();
  return { sent, failed };
}

/**
 * Redis CPU per captured request on one setup: instance A takes the load, instance B has a
 * socket on each of ENDPOINTS endpoints.
 * @param {number} shards
 * @param {import('../common.mjs').Config} config
 */
async function measureSetup(shards, config) {
  const redis = await startRedis(shards);
  const a = await startServer('hookwatch', redis.env);
  const b = await startServer('hookwatch', redis.env, [], undefined, 1);
  const watcher = await startWatcher(b, { endpoints: ENDPOINTS });
  try {
    const urls = /** @type {string[]} */ (watcher.urls).map(
      (url) => `http://127.0.0.1:${a.port}${new URL(url).pathname}`,
    );
    await spreadLoad(urls, 1);
    /** @type {number[]} */
    const perRequest = [];
    for (let round = 0; round < config.rounds; round++) {
      const before = redis.pids.map(cpuTimes);
      const { sent } = await spreadLoad(urls, config.seconds);
      const after = redis.pids.map(cpuTimes);
      const seconds = after.reduce((sum, t, i) => {
        const start = /** @type {{ user: number, system: number }} */ (before[i]);
        return sum + t.user + t.system - (start.user + start.system);
      }, 0);
      perRequest.push((seconds / Math.max(1, sent)) * 1e6);
      console.log(
        `  shards ${shards}: ${sent} captured, Redis CPU ${((seconds / Math.max(1, sent)) * 1e6).toFixed(1)} µs per request (all shards together)`,
      );
    }
    return { redisMicros: median(perRequest), perRound: perRequest.map((micros) => Math.round(micros * 10) / 10) };
  } finally {
    watcher.stop();
    a.child.kill();
    b.child.kill();
    redis.stop();
  }
}

/**
 * @param {import('../common.mjs').Config} config
 * @param {number} shards
 */
export async function shardsPhase(config, shards) {
  const one = await measureSetup(1, config);
  const many = await measureSetup(shards, config);
  return { shards: { count: shards, endpoints: ENDPOINTS, one, many } };
}

/**
 * @param {Awaited<ReturnType<typeof shardsPhase>>['shards']} result
 * @param {(n: number, digits?: number) => string} f
 */
export function shardsReport(result, f) {
  const ratio = result.many.redisMicros / result.one.redisMicros;
  const holds = ratio <= 1.15;
  return {
    lines: [
      `Redis CPU per captured request, ${result.endpoints} endpoints each watched on instance B, load on A: one node ${f(result.one.redisMicros, 1)} µs (rounds ${result.one.perRound.join(', ')}), ` +
        `${result.count}-shard Cluster ${f(result.many.redisMicros, 1)} µs summed over the shards (rounds ${result.many.perRound.join(', ')}): ${f(ratio, 2)}×.`,
    ],
    /** @type {import('../report.mjs').Target[]} */
    targets: [
      [`Redis: ${result.count} shards' summed CPU per request <= 1.15x one node`, ratio, holds],
      ['Redis: CPU per captured request on one node <= 20 µs', result.one.redisMicros, result.one.redisMicros <= 20],
    ],
  };
}
