// The Redis phase of `npm run bench` (--only=redis): two instances on one Redis, the sender on
// instance A and the watcher on instance B, against memory mode (sender and watcher on one
// instance) in the same run, in alternating rounds. Reports the throughput ratio and the delivery
// latency Redis adds at a steady 1,000 req/s. Keys live under a prefix of their own, deleted
// after (never FLUSH).
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';

const STEADY_RATE = 1000;

/**
 * `bench` gives the runner's own helpers: startServer(kind, env), startWatcher(server),
 * measure(server, url, watcher, options), rounds.
 */
export async function redisPhase(bench) {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `hookwatch-bench:${process.pid}:`;
  const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix };
  const memory = await bench.startServer('hookwatch');
  const a = await bench.startServer('hookwatch', env);
  // B on the other core, as a second instance would have its own: A, which takes the load, is
  // on core 0 like the memory-mode server, so the two compare per instance. B shares core 1 with
  // the load generator and the watcher; Redis runs where the OS puts it.
  const b = await bench.startServer('hookwatch', env, [], undefined, 1);
  const memoryWatcher = await bench.startWatcher(memory);
  const crossWatcher = await bench.startWatcher(b);
  const memoryUrl = memoryWatcher.url;
  // Sent to A, watched on B: every request crosses Redis (store script, pub/sub) on its way.
  const crossUrl = `http://127.0.0.1:${a.port}${new URL(crossWatcher.url).pathname}`;
  const runs = { memory: [], redis: [], memorySteady: [], redisSteady: [] };
  const redisPid = await redisServerPid(redisUrl);
  const otherPids = { 'instance B': b.pid, ...(redisPid ? { Redis: redisPid } : {}) };
  try {
    for (let round = 0; round < bench.rounds; round++) {
      const order = round % 2 === 0 ? ['memory', 'redis'] : ['redis', 'memory'];
      for (const mode of order) {
        const [server, url, watcher] = mode === 'memory' ? [memory, memoryUrl, memoryWatcher] : [a, crossUrl, crossWatcher];
        const others = mode === 'memory' ? {} : { otherPids };
        runs[mode].push(await bench.measure(server, url, watcher, { label: `${mode} throughput`, ...others }));
        runs[`${mode}Steady`].push(await bench.measure(server, url, watcher, { label: `${mode} at ${STEADY_RATE}/s`, pacedRate: STEADY_RATE, ...others }));
      }
    }
  } finally {
    memoryWatcher.stop();
    crossWatcher.stop();
    for (const server of [memory, a, b]) server.child.kill();
    await dropPrefix(redisUrl, prefix);
  }
  const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
  const of = (list, pick) => median(list.map(pick).filter(Number.isFinite));
  return {
    rounds: bench.rounds,
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
    lost: runs.redis.concat(runs.redisSteady).reduce((sum, run) => sum + Math.max(0, run.sent - (run.delivery?.received ?? 0)), 0),
  };
}

/** The report's lines and target rows for the phase's result. */
export function redisReport(result, f) {
  const ratio = result.redisRps / result.memoryRps;
  const addedP99 = result.redisP99 - result.memoryP99;
  const lines = [
    `Redis (2 instances, sender on A, watcher on B, ${result.rounds} alternating round(s)): ${f(result.redisRps)} req/s against ${f(result.memoryRps)} in memory mode (${f(ratio, 2)}x); ` +
      `CPU µs/req: sender's instance ${f(result.redisSenderCpuMicros)}, watcher's instance ${f(result.redisWatcherInstanceCpuMicros)}, Redis ${f(result.redisServerCpuMicros)}, against ${f(result.memoryCpuMicros)} for the one memory-mode instance; ` +
      `at ${STEADY_RATE} req/s delivery p50/p99 ${f(result.redisP50, 2)}/${f(result.redisP99, 2)} ms against ${f(result.memoryP50, 2)}/${f(result.memoryP99, 2)} ms; ${result.lost} not delivered.`,
  ];
  const targets = [
    ['Redis: throughput >= 0.7x memory mode', ratio, ratio >= 0.7],
    ['Redis: added p99 delivery latency at 1,000 req/s <= 2 ms', addedP99, addedP99 <= 2],
  ];
  return { lines, targets };
}

/** The Redis server's process id, when it runs on this machine (for its CPU time); else undefined. */
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
