// @ts-check
// The report of a run: the text printed and written to results/latest.md, the targets, the whole
// results in results/latest.json, and one line appended to results/history.jsonl.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { CONNECTIONS, FAN_OUT, KIB, MIB, WARMUP_SECONDS, commitOf, comparedKinds } from './common.mjs';
import { keptReport } from './phases/kept.mjs';
import { rulesReport } from './phases/rules.mjs';
import { shardsReport } from './phases/shards.mjs';
import { redisReport } from './phases/redis.mjs';

/** @typedef {import('./common.mjs').Config} Config */
/** @typedef {import('./phases/fleet.mjs').Summary} Summary */
/**
 * What the phases return, each the part of it that ran.
 * @typedef {Awaited<ReturnType<typeof import('./phases/capture.mjs').capturePhase>>
 *   & Awaited<ReturnType<typeof import('./phases/latency.mjs').latencyPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/fanout.mjs').fanOutPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/idle.mjs').idlePhase>>
 *   & Awaited<ReturnType<typeof import('./phases/full-endpoints.mjs').fullEndpointsPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/stored-bodies.mjs').storedBodiesPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/large.mjs').largeBodiesPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/redis.mjs').redisPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/kept.mjs').keptPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/rules.mjs').rulesPhase>>
 *   & Awaited<ReturnType<typeof import('./phases/shards.mjs').shardsPhase>>} PhaseResults
 */
/**
 * @typedef {{ commit: string, machine: ReturnType<typeof import('./common.mjs').machine>, quick: boolean, rounds: number, seconds: number }
 *   & Partial<PhaseResults>
 *   & { targets?: { name: string, value: number, holds: boolean }[] }} Results
 */
/** A target: what it says, the figure it is judged on, whether it holds. @typedef {[string, number, boolean]} Target */
/** Some of the report's lines, and the targets they judge. @typedef {{ lines: string[], targets?: Target[] }} Section */
/** @typedef {(results: Results, config: Config) => Section} SectionOf */

/**
 * A figure with `digits` decimals, '—' when there is none.
 * @param {number} n
 * @param {number} [digits]
 */
const f = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

/**
 * How the report names a server: compared builds and, beside them, this one by their commits.
 * @param {string} kind
 * @param {Results} results
 * @param {Config} config
 */
function nameOf(kind, results, config) {
  const { compareDirs } = config;
  const compared = comparedKinds(config).indexOf(kind);
  if (compared !== -1)
    return `hookwatch at ${commitOf(compareDirs[compared])}${compareDirs.length > 1 ? ` (${compareDirs[compared]})` : ''}`;
  return kind === 'hookwatch' && compareDirs[0] ? `hookwatch at ${results.commit}` : kind;
}

/** @type {SectionOf} */
const header = (results, config) => ({
  lines: [
    `Hookwatch benchmark — ${results.commit}, ${results.machine.cpu}, ${results.machine.cores} cores, Node ${results.machine.node}${config.quick ? ' (quick)' : ''}${config.only ? ` (only ${config.only.join(', ')})` : ''}`,
    `${config.rounds} round(s) of ${config.seconds} s after a ${WARMUP_SECONDS} s warm-up, servers in reverse order every other round; medians. Servers on core 0, load and watchers on core 1.`,
    'Headline: server CPU per request (utime + stime of the server process over a fixed request count). req/s is shown, not judged: core 1 caps it.',
  ],
});

/**
 * One row of the table; `expected`: the deliveries there should have been.
 * @param {string} label
 * @param {Summary & { delivered?: number }} r
 * @param {string} ratio
 * @param {number} [expected]
 */
const row = (label, r, ratio, expected = r.sent) =>
  `| ${label} | ${f(r.cpuMicrosPerRequest)} | ${f(r.userMicrosPerRequest)} + ${f(r.systemMicrosPerRequest)} | ${ratio} | ${f(r.rps)} | ${r.coresBusy.map((b) => f(b * 100)).join(' / ')} | ` +
  `${r.delivered === undefined ? '—' : `${r.delivered} / ${expected}`} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.maxMs, 1)} |`;

/**
 * The capture, latency and fan-out phases that ran, each with the label of its rows and of its
 * per-round line.
 * @param {Results} results
 */
const throughputLists = (results) =>
  /** @type {[Record<string, Summary & { expectedDeliveries?: number }> | undefined, string, string][]} */ ([
    [results.throughput, ', 1 KB POST, 50 conns', '1 KB POST'],
    [results.latency, ' at a steady 2,000 req/s', '2,000 req/s'],
    [results.fanOut, `, ${FAN_OUT} watchers`, `${FAN_OUT} watchers`],
  ]).filter(([list]) => list);

/** The table of the capture, latency and fan-out runs, then each one's CPU per round. @type {SectionOf} */
const table = (results, config) => {
  const lists = throughputLists(results);
  if (lists.length === 0) return { lines: [] };
  const name = (/** @type {string} */ kind) => nameOf(kind, results, config);
  const rows = lists.flatMap(([list, label]) =>
    Object.entries(list).map(([kind, r]) =>
      row(
        `${name(kind)}${label}`,
        r,
        `${f(r.cpuMicrosPerRequest / list['lean-relay'].cpuMicrosPerRequest, 2)}x`,
        r.expectedDeliveries,
      ),
    ),
  );
  const perRound = lists.map(
    ([list, , phase]) =>
      `Server CPU µs/req per round, ${phase} (round order alternates): ${Object.entries(list)
        .map(([kind, r]) => `${name(kind)} ${r.cpuMicrosPerRound.join(' ')}`)
        .join('; ')}.`,
  );
  return {
    lines: [
      '',
      '| run | server CPU µs/req | user + system | vs lean relay | req/s | cores busy % (0 / 1) | delivered / sent | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      ...perRound,
    ],
  };
};

/** @type {SectionOf} */
const comparisons = (results, config) => ({
  lines: (results.comparisons ?? []).map(
    ({ kind, medianPairedDifferenceMicros, roundsLower }) =>
      `This build (${results.commit}) against ${nameOf(kind, results, config)}: median paired difference ${f(medianPairedDifferenceMicros, 1)} µs/req, lower in ${roundsLower} of ${config.rounds} rounds.`,
  ),
});

/** @type {SectionOf} */
const capture = ({ throughput: t }) => {
  if (!t) return { lines: [] };
  const lean = t['lean-relay'];
  // A closed loop keeps CONNECTIONS requests in flight; when the server is the bottleneck they
  // queue after their send time was stamped, so latency cannot fall below CONNECTIONS / rate
  // (Little's law). Where the load generator is the bottleneck the queue is before the stamp.
  const floor = (/** @type {number} */ rps) => f((CONNECTIONS / rps) * 1000, 2);
  return {
    lines: [
      `At saturation ${CONNECTIONS} requests are in flight: ${CONNECTIONS} / rate = ${floor(t.hookwatch.rps)} ms for Hookwatch, ${floor(lean.rps)} ms for the lean relay, the least delivery latency a server-bound run can show.`,
    ],
    targets: [
      [
        'capture-and-deliver CPU <= 1.0x the lean relay (µs/req ratio)',
        t.hookwatch.cpuMicrosPerRequest / lean.cpuMicrosPerRequest,
        t.hookwatch.cpuMicrosPerRequest <= lean.cpuMicrosPerRequest,
      ],
    ],
  };
};

/** @type {SectionOf} */
const latency = ({ latency: steady }) => {
  if (!steady) return { lines: [] };
  const [mine, relay] = [steady.hookwatch, steady['lean-relay']];
  return {
    lines: [],
    targets: [
      [
        "p99 at 2,000 req/s <= the lean relay's + 1 ms, nothing lost (ms over the relay's)",
        mine.p99Ms - relay.p99Ms,
        mine.p99Ms <= relay.p99Ms + 1 && mine.delivered >= mine.sent,
      ],
    ],
  };
};

/**
 * Judged as server capacity (1 / CPU per request) with FAN_OUT watchers against one watcher
 * (the single-watcher figure from the capture rounds, or else the steady-rate ones).
 * @type {SectionOf}
 */
const fanOut = ({ throughput: t, latency: steady, fanOut: fan }) => {
  const one = t?.hookwatch ?? steady?.hookwatch;
  if (!fan || !one) return { lines: [] };
  const capacity = one.cpuMicrosPerRequest / fan.hookwatch.cpuMicrosPerRequest;
  return {
    lines: [
      `Fan-out to ${FAN_OUT}: the server's capacity (1 / CPU per request) is ${f(capacity, 2)}x its single-watcher capacity${t ? `; in req/s ${f(fan.hookwatch.rps / t.hookwatch.rps, 2)}x (not judged)` : ''}. ` +
        (t
          ? `The lean relay's: ${f(t['lean-relay'].cpuMicrosPerRequest / fan['lean-relay'].cpuMicrosPerRequest, 2)}x.`
          : ''),
    ],
    targets: [
      [
        `fan-out to ${FAN_OUT} >= 0.5x single-watcher throughput, nothing lost (capacity ratio)`,
        capacity,
        capacity >= 0.5 && fan.hookwatch.delivered >= fan.hookwatch.expectedDeliveries,
      ],
    ],
  };
};

/** @type {SectionOf} */
const idle = ({ idleEndpoints: idle, idleEndpointsDefaultFlags: plain }) => {
  if (!idle) return { lines: [] };
  return {
    lines: [
      `Idle endpoints: ${idle.endpoints} with one socket each, young generation fixed at 16 MiB: RSS ${f(idle.rssBeforeMiB, 1)} -> ${f(idle.rssAfterMiB, 1)} MiB, ` +
        `${f(idle.bytesPerEndpoint / KIB, 2)} KiB per endpoint (V8 heap in use ${f(idle.heapBytesPerEndpoint / KIB, 2)} KiB of it).`,
      `  With default V8 flags: ${f(plain.bytesPerEndpoint / KIB, 2)} KiB per endpoint; heap in use ${f(plain.heapBytesPerEndpoint / KIB, 2)} KiB, heap committed ${f(plain.heapCommittedBytesPerEndpoint / KIB, 2)} KiB (the young generation growing once).`,
    ],
    targets: [
      ['idle endpoint with its socket <= 10 KiB RSS', idle.bytesPerEndpoint / KIB, idle.bytesPerEndpoint <= 10 * KIB],
    ],
  };
};

/** @type {SectionOf} */
const fullEndpoints = ({ fullEndpoints: full }) => ({
  lines: full
    ? [
        `Full endpoints: ${full.endpoints} x 50 requests x ${full.storedCapBytes / KIB} KiB stored cap: stored at most ${f(full.boundMiB)} MiB (the lesser of the product and the default MAX_STORED_BYTES), RSS ${f(full.rssMiB)} MiB (${f(full.rssOverBound, 2)}x the bound).`,
      ]
    : [],
});

/** @type {SectionOf} */
const storedBodies = ({ storedBodies: stored }) => ({
  lines: stored
    ? [
        'Stored 1 MiB bodies (16 per case, RSS after a full GC):',
        ...stored.map(
          (r) =>
            `  ${r.label.padEnd(26)} RSS ${f(r.rssBytesPerBody / MIB, 2)} MiB per body, counted ${f(r.storedBytesPerBody / MIB, 2)} MiB (${r.ok}/16 accepted)`,
        ),
      ]
    : [],
});

/** @type {SectionOf} */
const fullBudget = ({ fullBudget: budget }) => ({
  lines: budget
    ? [
        `Full budget: MAX_STORED_BYTES ${budget.budgetMiB} MiB, ${budget.sentMiB} x 1 MiB 0x01 form bodies sent: stored ${f(budget.storedMiB)} MiB, ` +
          `RSS ${f(budget.rssBeforeMiB)} -> peak ${f(budget.rssPeakMiB)} MiB, ${f(budget.rssAfterMiB)} after (peak ${f((budget.rssPeakMiB - budget.rssBeforeMiB) / budget.budgetMiB, 2)}x the budget above the start).`,
      ]
    : [],
});

/** @type {SectionOf} */
const largeBodies = ({ largeBodies: large }, config) => ({
  lines: large
    ? [
        `Large bodies (stored cap 512 KiB, read limit 10 MiB): 1 MiB bodies ${f(large.oneMiB.rps)} req/s, delivered ${large.oneMiB.delivered} / ${large.oneMiB.sent}, ` +
          `RSS ${f(large.oneMiB.rssBeforeMiB)} -> ${f(large.oneMiB.rssAfterMiB)} MiB (peak ${f(large.oneMiB.firstHalfPeakMiB)} in the first half of the run, ${f(large.oneMiB.secondHalfPeakMiB)} in the second); ` +
          `20 MiB bodies answered 413 ${f(large.twentyMiB.rps)} /s (${large.twentyMiB.answered413} in ${config.seconds} s), RSS peak ${f(large.twentyMiB.firstHalfPeakMiB)} then ${f(large.twentyMiB.secondHalfPeakMiB)} MiB, ${f(large.twentyMiB.rssAfterMiB)} after.`,
      ]
    : [],
});

/** @type {SectionOf} */
const redis = ({ redis: result }) => (result ? redisReport(result, f) : { lines: [] });

/** @type {SectionOf} */
const kept = ({ kept: result }) => (result ? keptReport(result, f) : { lines: [] });

/** @type {SectionOf} */
const rules = ({ rules: result }) => (result ? rulesReport(result, f) : { lines: [] });

/** @type {SectionOf} */
const shards = ({ shards: result }) => (result ? shardsReport(result, f) : { lines: [] });

/** The report's sections, in order; the blank section ends the throughput part. @type {SectionOf[]} */
const SECTIONS = [
  header,
  table,
  comparisons,
  capture,
  latency,
  fanOut,
  () => ({ lines: [''] }),
  idle,
  fullEndpoints,
  storedBodies,
  fullBudget,
  largeBodies,
  kept,
  rules,
  redis,
  shards,
];

/**
 * The report's text, and every target with whether it holds.
 * @param {Results} results
 * @param {Config} config
 */
export function report(results, config) {
  const sections = SECTIONS.map((section) => section(results, config));
  const targets = sections.flatMap((section) => section.targets ?? []);
  const lines = [
    ...sections.flatMap((section) => section.lines),
    '',
    'Targets:',
    ...targets.map(([name, value, holds]) => `  ${holds ? 'HOLDS' : 'MISSES'}  ${name}: ${f(value, 2)}`),
  ];
  return { text: lines.join('\n'), targets: targets.map(([name, value, holds]) => ({ name, value, holds })) };
}

/**
 * Writes results/latest.json and latest.md and appends the run's line to results/history.jsonl.
 * @param {Results} results
 * @param {string} text  the report
 * @param {string} options  the run's command-line options, as typed
 */
export function writeResults(results, text, options) {
  const out = new URL('results/', import.meta.url);
  mkdirSync(out, { recursive: true });
  writeFileSync(new URL('latest.json', out), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(new URL('latest.md', out), `${text}\n`);
  appendFileSync(new URL('history.jsonl', out), `${JSON.stringify(historyLine(results, options))}\n`);
}

/** @param {number} n */
const round2 = (n) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);

/**
 * Each compared build's headline figures, for the history.
 * @param {Results} results
 */
const comparedHistory = ({ throughput: t, comparisons, rounds }) =>
  comparisons?.length
    ? comparisons.map((compared) => ({
        commit: compared.commit,
        dir: compared.dir,
        cpuVsLean: round2(t[compared.kind].cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
        medianPairedDifferenceMicros: round2(compared.medianPairedDifferenceMicros),
        roundsLower: `${compared.roundsLower}/${rounds}`,
      }))
    : undefined;

/**
 * The Redis phase's headline figures, for the history.
 * @param {Results['redis']} redis
 */
const redisHistory = (redis) =>
  redis && {
    throughputVsMemory: round2(redis.redisRps / redis.memoryRps),
    addedP99Ms: round2(redis.redisP99 - redis.memoryP99),
    cpuMicrosPerRequest: {
      memory: round2(redis.memoryCpuMicros),
      sender: round2(redis.redisSenderCpuMicros),
      watcherInstance: round2(redis.redisWatcherInstanceCpuMicros),
      redis: round2(redis.redisServerCpuMicros),
    },
  };

/**
 * One line per run: which code, when, and the headline ratios.
 * @param {Results} results
 * @param {string} options
 */
function historyLine(results, options) {
  const cpuOf = (/** @type {Record<string, Summary> | undefined} */ list) =>
    list && Object.fromEntries(Object.entries(list).map(([kind, r]) => [kind, round2(r.cpuMicrosPerRequest)]));
  const { throughput: t, latency: steady, fanOut: fan } = results;
  const one = t?.hookwatch ?? steady?.hookwatch;
  return {
    commit: results.commit,
    date: results.machine.date,
    options,
    cpuMicrosPerRequest: cpuOf(t),
    hookwatchCpuVsLean: t && round2(t.hookwatch.cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
    naiveCpuVsLean:
      t?.['naive-relay'] && round2(t['naive-relay'].cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
    compared: comparedHistory(results),
    p99At2000OverLeanMs: steady && round2(steady.hookwatch.p99Ms - steady['lean-relay'].p99Ms),
    fanOutCapacity: fan && one && round2(one.cpuMicrosPerRequest / fan.hookwatch.cpuMicrosPerRequest),
    idleKiBPerEndpoint: results.idleEndpoints && round2(results.idleEndpoints.bytesPerEndpoint / KIB),
    redis: redisHistory(results.redis),
    targetsHeld: `${results.targets.filter((target) => target.holds).length}/${results.targets.length}`,
  };
}
