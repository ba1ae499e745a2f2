// @ts-check
// The fan-out phase (--only=fanout): a second endpoint with FAN_OUT watchers, and the lean relay
// with as many sockets (it sends to every socket it holds, so its single watcher leaves first).
// Both write FAN_OUT copies of every message through loopback TCP; the relay shows where that
// alone ends.
import { FAN_OUT } from '../common.mjs';
import { startWatcher } from '../processes.mjs';
import { rounds, summary } from './fleet.mjs';

/**
 * @param {import('./fleet.mjs').Fleet} fleet
 * @param {string[]} kinds
 * @param {import('../common.mjs').Config} config
 */
export async function fanOutPhase(fleet, kinds, config) {
  fleet.watchers['lean-relay'].stop();
  delete fleet.watchers['lean-relay'];
  /** @type {Record<string, import('../processes.mjs').Watcher>} */
  const fanWatchers = {};
  for (const kind of kinds) fanWatchers[kind] = await startWatcher(fleet.servers[kind], { sockets: FAN_OUT });
  const lists = await rounds(
    fleet,
    kinds,
    (kind) => fanWatchers[kind],
    { fanOut: FAN_OUT, label: `, ${FAN_OUT} watchers` },
    config,
  );
  for (const watcher of Object.values(fanWatchers)) watcher.stop();
  const fanOut = Object.fromEntries(
    Object.entries(lists).map(([kind, list]) => {
      const summarised = summary(list);
      return [kind, { ...summarised, expectedDeliveries: summarised.sent * FAN_OUT }];
    }),
  );
  return { fanOut };
}
