// @ts-check
// The load a run sends (autocannon in a closed loop, or a paced sender) and measure(), one
// measured run of it against a server: its rate, the server's CPU per request, and what the
// watcher received.
import { Agent, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { CONNECTIONS, KIB, WARMUP_SECONDS, sleep } from './common.mjs';
import { coreTimes, coresBusy, cpuSeconds } from './proc.mjs';
import { cpuTimes } from './server-env.mjs';

/** @typedef {import('./processes.mjs').Server} Server */
/** @typedef {import('./processes.mjs').Watcher} Watcher */
/** @typedef {import('./processes.mjs').Delivery} Delivery */
/**
 * What load() and pacedLoad() answer: autocannon's result, of which a run reads these.
 * @typedef {{ '2xx': number, non2xx: number, errors: number, timeouts: number }} LoadResult
 */
/**
 * @typedef {object} LoadOptions
 * @property {number} [seconds]  how long to send, unless `amount` is given
 * @property {number} [amount]  how many requests to send
 * @property {number} [size]  of the timed JSON body made for each request (1 KiB)
 * @property {string} [body]  one body for every request instead
 * @property {number} [connections]
 */
/**
 * measure()'s options; the rest of LoadOptions go to the load.
 * @typedef {LoadOptions & {
 *   seconds: number,
 *   label: string,
 *   pacedRate?: number,
 *   knownRate?: number,
 *   fanOut?: number,
 *   otherPids?: Record<string, number>,
 * }} MeasureOptions
 */
/**
 * One measured run. CPU figures are per request in µs; coresBusy the share of cores 0 and 1 in use.
 * @typedef {object} Run
 * @property {number} rps
 * @property {number} sent
 * @property {number} non2xx
 * @property {number} errors
 * @property {number} cpuMicrosPerRequest
 * @property {number} userMicrosPerRequest
 * @property {number} systemMicrosPerRequest
 * @property {number[]} coresBusy
 * @property {Record<string, number>} othersMicrosPerRequest
 * @property {Delivery | undefined} delivery
 */

/** @type {Map<number, string>} */
const pads = new Map();
/**
 * A JSON body of about `size` bytes carrying its send time, made fresh for every request.
 * @param {number} size
 */
function timedBody(size) {
  let pad = pads.get(size);
  if (pad === undefined) pads.set(size, (pad = `,"pad":"${'x'.repeat(Math.max(0, size - 40))}"}`));
  return `{"t":${(performance.timeOrigin + performance.now()).toFixed(3)}${pad}`;
}

/**
 * One 1 KiB timed POST on `agent`; `count` tallies its answer.
 * @param {string} url
 * @param {Agent} agent
 * @param {{ ok: number, failed: number }} count
 * @returns {Promise<void>}
 */
const post = (url, agent, count) =>
  new Promise((resolve) => {
    const body = timedBody(KIB);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode >= 200 && res.statusCode < 300) count.ok++;
          else count.failed++;
          resolve();
        });
      },
    );
    req.on('error', () => {
      count.failed++;
      resolve();
    });
    req.end(body);
  });

/**
 * Sends at a steady `rate` per second for `seconds` (autocannon's rate option sends each second's
 * quota in a burst, which measures bursts, not a fixed rate). Each body is stamped as it is sent.
 * @param {string} url
 * @param {number} rate
 * @param {number} seconds
 * @returns {Promise<LoadResult & { elapsedSeconds: number }>}
 */
export async function pacedLoad(url, rate, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const total = rate * seconds;
  const started = performance.now();
  const count = { ok: 0, failed: 0 };
  let sent = 0;
  const inFlight = new Set();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    while (sent < due) {
      const pending = post(url, agent, count);
      inFlight.add(pending);
      pending.then(() => inFlight.delete(pending));
      sent++;
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  agent.destroy();
  return {
    '2xx': count.ok,
    non2xx: count.failed,
    errors: 0,
    timeouts: 0,
    elapsedSeconds: (performance.now() - started) / 1000,
  };
}

/**
 * Closed-loop load from autocannon: `connections` requests in flight for `seconds`, or until
 * `amount` are answered. Options of measure() that are not the load's are left out.
 * @param {string} url
 * @param {LoadOptions & Partial<MeasureOptions>} options
 * @returns {Promise<LoadResult>}
 */
export function load(url, options) {
  const {
    size = KIB,
    body,
    seconds,
    connections = CONNECTIONS,
    label: _label,
    fanOut: _fanOut,
    knownRate: _knownRate,
    otherPids: _otherPids,
    ...rest
  } = options;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        // autocannon notices that a fixed amount is done only at its next sample tick (1 s by
        // default), which would add up to a second to the measured time.
        sampleInt: 20,
        ...(rest.amount === undefined ? { duration: seconds } : {}),
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ...(body === undefined
          ? { requests: [{ setupRequest: (/** @type {object} */ request) => ({ ...request, body: timedBody(size) }) }] }
          : { body }),
        ...rest,
      },
      (/** @type {Error | null} */ error, /** @type {LoadResult} */ result) =>
        error ? reject(error) : resolve(result),
    );
  });
}

/**
 * Waits until the watcher has stopped receiving (the tail of the previous load).
 * @param {Watcher | undefined} watcher
 * @param {number} quietMs
 */
async function settle(watcher, quietMs) {
  if (!watcher) return;
  let last = -1;
  for (let i = 0; i < 4000 / quietMs; i++) {
    const { received } = await watcher.report();
    if (received === last) return;
    last = received;
    // With 100 sockets, long enough for the last 50 requests of a run to reach them all.
    await sleep(quietMs);
  }
}

/**
 * The rate the warm-up reaches (its requests are not counted). A server measured in an earlier
 * round is warm and its rate known: `knownRate` skips the warm-up, so that more, shorter rounds
 * fit in the same time.
 * @param {string} url
 * @param {MeasureOptions} options
 */
async function rateOf(url, options) {
  if (options.knownRate !== undefined) return options.knownRate;
  const warm = options.pacedRate
    ? await pacedLoad(url, options.pacedRate, WARMUP_SECONDS)
    : await load(url, { ...options, seconds: WARMUP_SECONDS });
  return warm['2xx'] / WARMUP_SECONDS;
}

/**
 * Starts counting the CPU time of the server and of `otherPids` (other processes the run works:
 * in the Redis phase the watcher's instance and Redis itself) and the use of both cores. The
 * returned function stops and gives the CPU seconds spent since.
 * @param {number} pid
 * @param {Record<string, number>} [otherPids]
 */
function cpuClock(pid, otherPids = {}) {
  const cpuBefore = cpuTimes(pid);
  const others = Object.entries(otherPids);
  const othersBefore = others.map(([, other]) => cpuSeconds(other));
  const coresBefore = coreTimes();
  return () => {
    const cpuAfter = cpuTimes(pid);
    const othersCpu = others.map(
      ([name, other], i) => /** @type {[string, number]} */ ([name, cpuSeconds(other) - othersBefore[i]]),
    );
    return {
      user: cpuAfter.user - cpuBefore.user,
      system: cpuAfter.system - cpuBefore.system,
      others: othersCpu,
      busy: coresBusy(coresBefore),
    };
  };
}

/**
 * What the watcher received once `expected` messages have landed, or after 5 s.
 * @param {Watcher} watcher
 * @param {number} expected
 */
async function deliveryOf(watcher, expected) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const delivery = await watcher.report();
    if (delivery.received >= expected || Date.now() > deadline) return delivery;
    await sleep(50);
  }
}

/**
 * One measured run. The warm-up (not counted) finds the rate; the measured part then sends a
 * fixed number of requests (about `seconds` worth) and waits for every answer, so "sent" is
 * exact and every delivery can be accounted for.
 * @param {Server} server
 * @param {string} url
 * @param {Watcher | undefined} watcher
 * @param {MeasureOptions} options
 * @returns {Promise<Run>}
 */
export async function measure(server, url, watcher, options) {
  const rate = await rateOf(url, options);
  await settle(watcher, options.fanOut ? 300 : 100);
  await watcher?.reset();
  const amount = Math.max(100, Math.round(rate * options.seconds));
  const stopClock = cpuClock(server.pid, options.otherPids);
  const started = performance.now();
  const result = options.pacedRate
    ? await pacedLoad(url, options.pacedRate, options.seconds)
    : await load(url, { ...options, amount, seconds: undefined });
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpu = stopClock();
  const sent = result['2xx'];
  const delivery = watcher ? await deliveryOf(watcher, sent * (options.fanOut ?? 1)) : undefined;
  const perRequest = (/** @type {number} */ seconds) => (seconds / Math.max(1, sent)) * 1e6;
  /** @type {Run} */
  const run = {
    rps: sent / elapsedSeconds,
    sent,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMicrosPerRequest: perRequest(cpu.user + cpu.system),
    // In the process (JavaScript, V8, libuv) and in the kernel (system calls, loopback TCP).
    userMicrosPerRequest: perRequest(cpu.user),
    systemMicrosPerRequest: perRequest(cpu.system),
    // Share of each core in use during the run: shows which side limited it.
    coresBusy: cpu.busy,
    othersMicrosPerRequest: Object.fromEntries(cpu.others.map(([name, seconds]) => [name, perRequest(seconds)])),
    delivery,
  };
  logRun(options.label, run);
  return run;
}

/**
 * One line per measured run on stderr, to follow a run as it goes.
 * @param {string} label
 * @param {Run} run
 */
function logRun(label, run) {
  const ms = (/** @type {number | undefined} */ n) => (Number.isFinite(n) ? /** @type {number} */ (n).toFixed(2) : '—');
  console.error(
    `  ${label}: ${run.rps.toFixed(0)} req/s, ${run.cpuMicrosPerRequest.toFixed(0)} µs/req (user ${run.userMicrosPerRequest.toFixed(0)}, system ${run.systemMicrosPerRequest.toFixed(0)}), ` +
      `p50 ${ms(run.delivery?.p50)} p99 ${ms(run.delivery?.p99)} ms, cores busy ${run.coresBusy.map((b) => b.toFixed(2)).join('/')}` +
      Object.entries(run.othersMicrosPerRequest)
        .map(([name, micros]) => `, ${name} ${micros.toFixed(0)} µs/req`)
        .join(''),
  );
}
