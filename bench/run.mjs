// @ts-check
// npm run bench [-- --quick] [--only=PHASES] [--rounds=N] [--seconds=N] [--compare=DIR[,DIR…]] [--shards=N]
// Capture throughput, delivery latency, fan-out, memory and large bodies, each measured against
// baselines started in the same run. Servers run on core 0, this load generator and the watcher
// processes on core 1. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
// This is the driver: the phases are in phases/, each returning its part of the results, and the
// report is in report.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { THROUGHPUT_PHASES, commitOf, machine, root, runs } from './common.mjs';
import { captureKinds, capturePhase } from './phases/capture.mjs';
import { fanOutPhase } from './phases/fanout.mjs';
import { relayAndBuilds, startFleet, stopFleet } from './phases/fleet.mjs';
import { fullEndpointsPhase } from './phases/full-endpoints.mjs';
import { idlePhase } from './phases/idle.mjs';
import { keptPhase } from './phases/kept.mjs';
import { largeBodiesPhase } from './phases/large.mjs';
import { latencyPhase } from './phases/latency.mjs';
import { redisPhase } from './phases/redis.mjs';
import { rulesPhase } from './phases/rules.mjs';
import { shardsPhase } from './phases/shards.mjs';
import { storedBodiesPhase } from './phases/stored-bodies.mjs';
import { stopAll } from './processes.mjs';
import { report, writeResults } from './report.mjs';

/** @typedef {import('./common.mjs').Config} Config */

process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));

/**
 * @param {string[]} argv
 * @returns {Config}
 */
function parseOptions(argv) {
  const quick = argv.includes('--quick');
  const option = (/** @type {string} */ name) =>
    argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return {
    quick,
    // --only=capture,latency,fanout,memory,large runs some phases (to reproduce one figure); the
    // report shows what ran. throughput = capture, latency and fanout.
    only: option('only')?.split(','),
    rounds: Number(option('rounds') ?? (quick ? 1 : 3)),
    // --seconds=N: each measured run sends about N seconds of requests (more, shorter rounds for comparisons).
    seconds: Number(option('seconds') ?? (quick ? 2 : 5)),
    // --compare=DIR: another built checkout of Hookwatch (DIR/dist/main.js), measured in the same
    // rounds as this one (capture, latency, fan-out), alternating: the before/after of a change, in one run.
    // Several, comma-separated, to size a ladder of throw-away builds in one run.
    compareDirs:
      option('compare')
        ?.split(',')
        .map((dir) => resolve(dir)) ?? [],
    // --shards=N with --only=redis: Redis CPU per request on one node against an N-master Cluster.
    shards: Number(option('shards') ?? 0),
  };
}

/**
 * The whole run's hard stop: seconds + 5 s per measured run (a run takes seconds + 2 or so) and
 * 2 minutes for the memory and large-body phases.
 * @param {Config} config
 */
function budgetMs(config) {
  const { rounds, seconds, compareDirs } = config;
  const runsPerRound =
    (runs(config, 'capture') ? (compareDirs[0] === undefined ? 4 : 2 + compareDirs.length) : 0) +
    (runs(config, 'latency') ? 2 + compareDirs.length : 0) +
    (runs(config, 'fanout') ? 2 + compareDirs.length : 0);
  // The Redis phase (only when asked for): 4 measured runs per round, and three servers to start.
  const redisRuns = config.only?.includes('redis') ? rounds * 4 : 0;
  const keptRuns = config.only?.includes('kept') ? rounds * 2 + 6 : 0;
  const rulesRuns = config.only?.includes('rules') ? rounds * 2 + 2 : 0;
  const shardRuns = config.only?.includes('redis') && config.shards > 1 ? rounds * 2 + 6 : 0;
  return (
    30_000 +
    rounds * runsPerRound * (seconds + 5) * 1000 +
    (redisRuns + keptRuns + rulesRuns + shardRuns) * (seconds + 10) * 1000 +
    (runs(config, 'memory') || runs(config, 'large') ? 120_000 : 0)
  );
}

/**
 * The capture, latency and fan-out phases that run, on one set of servers started for them all.
 * @param {Config} config
 */
async function throughputPhases(config) {
  const phases = [
    { name: 'capture', kinds: captureKinds(config), run: capturePhase },
    { name: 'latency', kinds: relayAndBuilds(config), run: latencyPhase },
    { name: 'fanout', kinds: relayAndBuilds(config), run: fanOutPhase },
  ].filter(({ name }) => runs(config, name));
  const fleet = await startFleet(new Set(phases.flatMap(({ kinds }) => kinds)), config);
  const results = {};
  for (const { kinds, run } of phases) Object.assign(results, await run(fleet, kinds, config));
  stopFleet(fleet);
  return results;
}

/**
 * The phases these options select, in the order they run; each resolves to its part of the results.
 * @param {Config} config
 * @returns {(() => Promise<object>)[]}
 */
function selectedPhases(config) {
  return [
    ...(THROUGHPUT_PHASES.some((phase) => runs(config, phase)) ? [() => throughputPhases(config)] : []),
    ...(runs(config, 'memory')
      ? [() => idlePhase(config), () => fullEndpointsPhase(config), () => storedBodiesPhase(config)]
      : []),
    ...(runs(config, 'large') ? [() => largeBodiesPhase(config)] : []),
    // Needs a Redis (REDIS_URL, else 127.0.0.1:6379): only when asked for.
    ...(config.only?.includes('redis') ? [() => redisPhase(config)] : []),
    ...(config.only?.includes('redis') && config.shards > 1 ? [() => shardsPhase(config, config.shards)] : []),
    // The embedded store against memory for a kept endpoint: only when asked for.
    ...(config.only?.includes('kept') ? [() => keptPhase(config)] : []),
    // What 20 answer rules that never match cost a capture: only when asked for.
    ...(config.only?.includes('rules') ? [() => rulesPhase(config)] : []),
  ];
}

/** @param {Config} config */
async function main(config) {
  /** @type {import('./report.mjs').Results} */
  const results = {
    commit: commitOf(root),
    machine: machine(),
    quick: config.quick,
    rounds: config.rounds,
    seconds: config.seconds,
  };
  const budget = budgetMs(config);
  const started = Date.now();
  const hardStop = setTimeout(() => {
    console.error(`bench: over its time budget (${Math.round(budget / 1000)} s for these options), stopping`);
    process.exit(1);
  }, budget);
  try {
    for (const phase of selectedPhases(config)) Object.assign(results, await phase());
    const { text, targets } = report(results, config);
    results.targets = targets;
    console.log(text);
    writeResults(results, text, process.argv.slice(2).join(' '));
    console.log(`\nWrote bench/results/latest.json and latest.md, appended a line to history.jsonl`);
    console.log(`Total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    clearTimeout(hardStop);
    stopAll();
  }
  process.exit(0);
}

if (process.env.HOOKWATCH_BENCH_PINNED !== '1') {
  // Re-run this script pinned to core 1, away from the servers.
  execFileSync('npm', ['run', 'build:server', '--silent'], { cwd: root, stdio: 'inherit' });
  const pinned = spawn(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, HOOKWATCH_BENCH_PINNED: '1' },
    },
  );
  pinned.on('exit', (code) => process.exit(code ?? 1));
} else {
  await main(parseOptions(process.argv));
}
