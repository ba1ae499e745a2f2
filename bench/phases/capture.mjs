// @ts-check
// The capture phase (--only=capture): 1 KB JSON POSTs from 50 connections in a closed loop, each
// server with one watcher. Without --compare it measures every baseline beside Hookwatch; with it,
// the rounds are for judging a change: the lean relay and the builds, paired round by round.
import { commitOf, comparedKind, median } from '../common.mjs';
import { builds, rounds, summaries } from './fleet.mjs';

/** @typedef {import('../common.mjs').Config} Config */
/**
 * This build against compared build `kind`, from the rounds that measured both.
 * @typedef {{ kind: string, dir: string, commit: string, medianPairedDifferenceMicros: number, roundsLower: number }} Comparison
 */

/**
 * The servers this phase measures.
 * @param {Config} config
 */
export const captureKinds = (config) =>
  config.compareDirs.length === 0
    ? ['bare-http', 'lean-relay', 'naive-relay', 'hookwatch']
    : ['lean-relay', ...builds(config)];

/**
 * @param {import('./fleet.mjs').Fleet} fleet
 * @param {string[]} kinds
 * @param {Config} config
 */
export async function capturePhase(fleet, kinds, config) {
  const lists = await rounds(fleet, kinds, (kind) => fleet.watchers[kind], { label: '' }, config);
  const throughput = summaries(lists);
  // Paired rounds: each round measured the builds next to each other.
  /** @type {Comparison[]} */
  const comparisons = config.compareDirs.map((dir, i) => {
    const differences = lists.hookwatch.map(
      (r, round) => r.cpuMicrosPerRequest - lists[comparedKind(i)][round].cpuMicrosPerRequest,
    );
    return {
      kind: comparedKind(i),
      dir,
      commit: commitOf(dir),
      medianPairedDifferenceMicros: median(differences),
      roundsLower: differences.filter((d) => d < 0).length,
    };
  });
  return { throughput, comparisons, compared: comparisons[0] };
}
