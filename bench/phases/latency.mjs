// @ts-check
// The latency phase (--only=latency): delivery latency at a steady 2,000 req/s (pacedLoad in
// load.mjs), each server with one watcher.
import { rounds, summaries } from './fleet.mjs';

/**
 * @param {import('./fleet.mjs').Fleet} fleet
 * @param {string[]} kinds
 * @param {import('../common.mjs').Config} config
 */
export async function latencyPhase(fleet, kinds, config) {
  const lists = await rounds(
    fleet,
    kinds,
    (kind) => fleet.watchers[kind],
    { pacedRate: 2000, label: ' at 2,000 req/s' },
    config,
  );
  return { latency: summaries(lists) };
}
