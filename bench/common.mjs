// @ts-check
// What the driver, the phases and the report share: a run's options, its fixed sizes, and a few
// small helpers.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The checkout this bench is part of: the Hookwatch it measures unless --compare adds others. */
export const root = fileURLToPath(new URL('..', import.meta.url));
export const WARMUP_SECONDS = 1;
export const CONNECTIONS = 50;
/** Sockets on one endpoint (Hookwatch) or on the relay in the fan-out runs. */
export const FAN_OUT = 100;
export const KIB = 1024;
export const MIB = 1024 * KIB;
/** The phases `--only=throughput` stands for. */
export const THROUGHPUT_PHASES = ['capture', 'latency', 'fanout'];

/**
 * A run's options, from its command line.
 * @typedef {object} Config
 * @property {boolean} quick
 * @property {string[] | undefined} only  the phases --only named; undefined runs all but redis
 * @property {number} rounds
 * @property {number} seconds  about how long each measured run sends
 * @property {string[]} compareDirs  other built checkouts measured in the same rounds (--compare)
 * @property {number} shards  --shards=N: the Cluster the shards phase measures against one node (0: none)
 */

/**
 * Whether `phase` runs with these options.
 * @param {Config} config
 * @param {string} phase
 */
export const runs = (config, phase) =>
  config.only === undefined ||
  config.only.includes(phase) ||
  (THROUGHPUT_PHASES.includes(phase) && config.only.includes('throughput'));

/**
 * The kind naming compared build `i`. The first is plain 'compared', the key results with a single
 * --compare directory have in latest.json and history.jsonl.
 * @param {number} i
 */
export const comparedKind = (i) => (i === 0 ? 'compared' : `compared-${i + 1}`);

/** @param {Config} config */
export const comparedKinds = (config) => config.compareDirs.map((_, i) => comparedKind(i));

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {number[]} values */
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The short commit of a checkout, `+dirty` when its tracked files (bench results aside) differ from it.
 * @param {string} dir
 */
export function commitOf(dir) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir }).toString().trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results'], { cwd: dir })
        .toString()
        .trim() !== '';
    return dirty ? `${commit}+dirty` : commit;
  } catch {
    return 'unknown';
  }
}

/** The host a run measured on, and when it started. */
export function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const cores = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s*:/gm)?.length ?? 0;
  return { cpu, cores, node: process.version, date: new Date().toISOString() };
}
