// @ts-check
// The Redis phase (--only=redis): two instances on one Redis, the sender on instance A and the
// watcher on instance B, against memory mode (sender and watcher on one instance) in the same run,
// in alternating rounds. Reports the throughput ratio and the delivery latency Redis adds at a
// steady 1,000 req/s. Keys live under a prefix of their own, deleted after (never FLUSH).
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { median } from '../common.mjs';
import { measure } from '../load.mjs';
import { startServer, startWatcher } from '../processes.mjs';

const STEADY_RATE = 1000;

/** @typedef {import('../load.mjs').Run} Run */
/**
 * @typedef {object} Side  one of the two modes: where its load goes and who watches
 * @property {import('../processes.mjs').Server} server
 * @property {string} url
 * @property {import('../processes.mjs').Watcher} watcher
 * @property {{ otherPids?: Record<string, number> }} others
 */

/**
 * Starts the memory-mode server, instances A and B, and a watcher for each mode.
 * @param {string} redisUrl
 * @param {string} prefix
 */
async function startSides(redisUrl, prefix) {
  const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix };
  const memory = await startServer('hookwatch');
  const a = await startServer('hookwatch', env);
  // B on the other core, as a second instance would have its own: A, which takes the load, is
  // on core 0 like the memory-mode server, so the two compare per instance. B shares core 1 with
  // the load generator and the watcher; Redis runs where the OS puts it.
  const b = await startServer('hookwatch', env, [], undefined, 1);
  const memoryWatcher = await startWatcher(memory);
  const crossWatcher = await startWatcher(b);
  // Sent to A, watched on B: every request crosses Redis (store script, pub/sub) on its way.
  const crossUrl = `http://127.0.0.1:${a.port}${new URL(/** @type {string} */ (crossWatcher.url)).pathname}`;
  const redisPid = await redisServerPid(redisUrl);
  const otherPids = { 'instance B': b.pid, ...(redisPid ? { Redis: redisPid } : {}) };
  /** @type {Record<'memory' | 'redis', Side>} */
  const sides = {
    memory: { server: memory, url: /** @type {string} */ (memoryWatcher.url), watcher: memoryWatcher, others: {} },
    redis: { server: a, url: crossUrl, watcher: crossWatcher, others: { otherPids } },
  };
  return { sides, servers: [memory, a, b] };
}

/**
 * Each mode's runs, throughput and steady, over `rounds` alternating rounds.
 * @param {Record<'memory' | 'redis', Side>} sides
 * @param {import('../common.mjs').Config} config
 */
async function measureSides(sides, config) {
  /** @type {Record<string, Run[]>} */
  const runs = { memory: [], redis: [], memorySteady: [], redisSteady: [] };
  for (let round = 0; round < config.rounds; round++) {
    /** @type {('memory' | 'redis')[]} */
    const order = round % 2 === 0 ? ['memory', 'redis'] : ['redis', 'memory'];
    for (const mode of order) {
      const { server, url, watcher, others } = sides[mode];
      runs[mode].push(
        await measure(server, url, watcher, { label: `${mode} throughput`, seconds: config.seconds, ...others }),
      );
      runs[`${mode}Steady`].push(
        await measure(server, url, watcher, {
          label: `${mode} at ${STEADY_RATE}/s`,
          pacedRate: STEADY_RATE,
          seconds: config.seconds,
          ...others,
        }),
      );
    }
  }
  return runs;
}

/**
 * Needs a Redis (REDIS_URL, else 127.0.0.1:6379).
 * @param {import('../common.mjs').Config} config
 */
export async function redisPhase(config) {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `hookwatch-bench:${process.pid}:`;
  const { sides, servers } = await startSides(redisUrl, prefix);
  let runs;
  try {
    runs = await measureSides(sides, config);
  } finally {
    sides.memory.watcher.stop();
    sides.redis.watcher.stop();
    for (const server of servers) server.child.kill();
    await dropPrefix(redisUrl, prefix);
  }
  return { redis: resultOf(runs, config.rounds) };
}

/**
 * The phase's figures: medians over the rounds, and what was not delivered.
 * @param {Record<string, Run[]>} runs
 * @param {number} rounds
 */
function resultOf(runs, rounds) {
  /**
   * @param {Run[]} list
   * @param {(run: Run) => number | undefined} pick
   */
  const of = (list, pick) => median(/** @type {number[]} */ (list.map(pick).filter(Number.isFinite)));
  return {
    rounds,
    memoryRps: of(runs.memory, (run) => run.rps),
    redisRps: of(runs.redis, (run) => run.rps),
    memoryCpuMicros: of(runs.memory, (run) => run.cpuMicrosPerRequest),
    redisSenderCpuMicros: of(runs.redis, (run) => run.cpuMicrosPerRequest),
    redisWatcherInstanceCpuMicros: of(runs.redis, (run) => run.othersMicrosPerRequest['instance B']),
    redisServerCpuMicros: of(runs.redis, (run) => run.othersMicrosPerRequest.Redis),
    memoryP50: of(runs.memorySteady, (run) => run.delivery?.p50),
    memoryP99: of(runs.memorySteady, (run) => run.delivery?.p99),
    redisP50: of(runs.redisSteady, (run) => run.delivery?.p50),
    redisP99: of(runs.redisSteady, (run) => run.delivery?.p99),
    lost: runs.redis
      .concat(runs.redisSteady)
      .reduce((sum, run) => sum + Math.max(0, run.sent - (run.delivery?.received ?? 0)), 0),
  };
}

/**
 * The report's lines and target rows for the phase's result.
 * @param {ReturnType<typeof resultOf>} result
 * @param {(n: number, digits?: number) => string} f  formats a figure ('—' when not finite)
 * @returns {{ lines: string[], targets: [string, number, boolean][] }}
 */
export function redisReport(result, f) {
  const ratio = result.redisRps / result.memoryRps;
  const addedP99 = result.redisP99 - result.memoryP99;
  const lines = [
    `Redis (2 instances, sender on A, watcher on B, ${result.rounds} alternating round(s)): ${f(result.redisRps)} req/s against ${f(result.memoryRps)} in memory mode (${f(ratio, 2)}x); ` +
      `CPU µs/req: sender's instance ${f(result.redisSenderCpuMicros)}, watcher's instance ${f(result.redisWatcherInstanceCpuMicros)}, Redis ${f(result.redisServerCpuMicros)}, against ${f(result.memoryCpuMicros)} for the one memory-mode instance; ` +
      `at ${STEADY_RATE} req/s delivery p50/p99 ${f(result.redisP50, 2)}/${f(result.redisP99, 2)} ms against ${f(result.memoryP50, 2)}/${f(result.memoryP99, 2)} ms; ${result.lost} not delivered.`,
  ];
  const senderRatio = result.redisSenderCpuMicros / result.memoryCpuMicros;
  lines.push(
    `Added p99 delivery latency at ${STEADY_RATE} req/s: ${f(addedP99, 2)} ms (reported, not judged). req/s on two cores measures how processes share them: printed, not judged.`,
  );
  /** @type {[string, number, boolean][]} */
  const targets = [
    [
      'Redis: Redis CPU per captured request (one node) <= 20 µs',
      result.redisServerCpuMicros,
      result.redisServerCpuMicros <= 20,
    ],
    ["Redis: the sender's instance CPU per request <= 1.4x memory mode's", senderRatio, senderRatio <= 1.4],
  ];
  return { lines, targets };
}

/**
 * The Redis server's process id, when it runs on this machine (for its CPU time); else undefined.
 * @param {string} url
 */
async function redisServerPid(url) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && existsSync(`/proc/${pid}/stat`) ? pid : undefined;
  } finally {
    redis.disconnect();
  }
}

/**
 * Deletes the keys under `prefix`.
 * @param {string} url
 * @param {string} prefix
 */
async function dropPrefix(url, prefix) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
