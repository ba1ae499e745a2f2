// @ts-check
// What the capture, latency and fan-out phases share: one set of servers, each with a watcher,
// started once and measured by each phase in turn, and rounds that alternate the servers' order.
import { comparedKinds, median } from '../common.mjs';
import { measure } from '../load.mjs';
import { startServer, startWatcher } from '../processes.mjs';

/** @typedef {import('../common.mjs').Config} Config */
/** @typedef {import('../load.mjs').Run} Run */
/** @typedef {import('../processes.mjs').Watcher} Watcher */
/**
 * @typedef {object} Fleet
 * @property {Record<string, import('../processes.mjs').Server>} servers  by kind
 * @property {Record<string, Watcher>} watchers  one socket each; none for bare-http
 * @property {Record<string, string>} urls  where a kind's load goes
 */
/** @typedef {ReturnType<typeof summary>} Summary */

/**
 * The builds measured: this one, and with --compare the others, in every round beside it.
 * @param {Config} config
 */
export const builds = (config) => ['hookwatch', ...comparedKinds(config)];

/**
 * The servers of the latency and fan-out phases: the lean relay and the builds.
 * @param {Config} config
 */
export const relayAndBuilds = (config) => ['lean-relay', ...builds(config)];

/**
 * Starts a server of each kind, with one watcher on each but bare-http.
 * @param {Iterable<string>} kinds
 * @param {Config} config
 * @returns {Promise<Fleet>}
 */
export async function startFleet(kinds, config) {
  /** @type {Fleet} */
  const fleet = { servers: {}, watchers: {}, urls: {} };
  const compared = comparedKinds(config);
  for (const kind of kinds) {
    const i = compared.indexOf(kind);
    const server = i === -1 ? await startServer(kind) : await startServer('hookwatch', {}, [], config.compareDirs[i]);
    fleet.servers[kind] = server;
    if (kind !== 'bare-http') fleet.watchers[kind] = await startWatcher(server);
    fleet.urls[kind] = fleet.watchers[kind]?.url ?? `http://127.0.0.1:${server.port}/hook`;
  }
  return fleet;
}

/** @param {Fleet} fleet */
export function stopFleet(fleet) {
  for (const watcher of Object.values(fleet.watchers)) watcher.stop();
  for (const server of Object.values(fleet.servers)) server.child.kill();
}

/**
 * Round `round`'s order: as listed in even rounds, reversed in odd ones, so no server always goes first.
 * @param {string[]} kinds
 * @param {number} round
 */
const orderOf = (kinds, round) => (round % 2 === 0 ? kinds : [...kinds].reverse());

/**
 * config.rounds rounds of every kind, in alternating order; the runs of each kind.
 * @param {Fleet} fleet
 * @param {string[]} kinds
 * @param {(kind: string) => Watcher | undefined} watcherOf
 * @param {{ label: string, pacedRate?: number, fanOut?: number }} options
 * @param {Config} config
 */
export async function rounds(fleet, kinds, watcherOf, options, config) {
  /** @type {Record<string, Run[]>} */
  const lists = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let round = 0; round < config.rounds; round++) {
    for (const kind of orderOf(kinds, round)) {
      const watcher = watcherOf(kind);
      // Paced runs send at their own rate; closed-loop ones reuse the previous round's.
      const knownRate = options.pacedRate || round === 0 ? undefined : lists[kind][round - 1].rps;
      const url = watcher?.url ?? fleet.urls[kind];
      lists[kind].push(
        await measure(fleet.servers[kind], url, watcher, {
          ...options,
          seconds: config.seconds,
          knownRate,
          label: `${kind}${options.label}`,
        }),
      );
    }
  }
  return lists;
}

/**
 * A kind's runs in one figure each: medians, totals, and the CPU of every round.
 * @param {Run[]} list
 */
export const summary = (list) => ({
  rps: median(list.map((r) => r.rps)),
  cpuMicrosPerRequest: median(list.map((r) => r.cpuMicrosPerRequest)),
  userMicrosPerRequest: median(list.map((r) => r.userMicrosPerRequest)),
  systemMicrosPerRequest: median(list.map((r) => r.systemMicrosPerRequest)),
  // Per round as well as medians: on a noisy machine the spread says how far to trust a difference.
  cpuMicrosPerRound: list.map((r) => Math.round(r.cpuMicrosPerRequest)),
  coresBusy: [0, 1].map((core) => median(list.map((r) => r.coresBusy[core]))),
  sent: list.reduce((n, r) => n + r.sent, 0),
  non2xx: list.reduce((n, r) => n + r.non2xx, 0),
  errors: list.reduce((n, r) => n + r.errors, 0),
  delivered: list.every((r) => r.delivery === undefined)
    ? undefined
    : list.reduce((n, r) => n + (r.delivery?.received ?? 0), 0),
  p50Ms: median(list.map((r) => r.delivery?.p50 ?? NaN)),
  p99Ms: median(list.map((r) => r.delivery?.p99 ?? NaN)),
  maxMs: Math.max(...list.map((r) => r.delivery?.max ?? NaN)),
});

/**
 * A summary per kind.
 * @param {Record<string, Run[]>} lists
 */
export const summaries = (lists) =>
  Object.fromEntries(Object.entries(lists).map(([kind, list]) => [kind, summary(list)]));
