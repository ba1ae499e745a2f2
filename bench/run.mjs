// npm run bench [-- --quick] [--only=PHASES] [--rounds=N] [--seconds=N] [--compare=DIR[,DIR…]]
// Capture throughput, delivery latency, fan-out, memory and large bodies, each measured against
// baselines started in the same run. Servers run on core 0, this load generator and the watcher
// processes on core 1. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
import { execFileSync, fork, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { redisPhase, redisReport } from './redis-phase.mjs';
import { benchServerEnv, cpuTimes, freePort } from './server-env.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');
const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
// --only=capture,latency,fanout,memory,large runs some phases (to reproduce one figure); the
// report shows what ran. throughput = capture, latency and fanout.
const only = option('only')?.split(',');
const THROUGHPUT_PHASES = ['capture', 'latency', 'fanout'];
const runs = (phase) => only === undefined || only.includes(phase) || (THROUGHPUT_PHASES.includes(phase) && only.includes('throughput'));
const ROUNDS = Number(option('rounds') ?? (quick ? 1 : 3));
// --compare=DIR: another built checkout of Hookwatch (DIR/dist/main.js), measured in the same
// rounds as this one (capture, latency, fan-out), alternating: the before/after of a change, in one run.
// Several, comma-separated, to size a ladder of throw-away builds in one run.
const compareDirs = option('compare')?.split(',').map((dir) => resolve(dir)) ?? [];
const compareDir = compareDirs[0];
/** The kind naming compared build `i` ('compared' for the first, so one comparison reads as before). */
const comparedKind = (i) => (i === 0 ? 'compared' : `compared-${i + 1}`);
const comparedKinds = compareDirs.map((_, i) => comparedKind(i));
// --seconds=N: each measured run sends about N seconds of requests (more, shorter rounds for comparisons).
const SECONDS = Number(option('seconds') ?? (quick ? 2 : 5));
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
/** Sockets on one endpoint (Hookwatch) or on the relay in the fan-out runs. */
const FAN_OUT = 100;
const KIB = 1024;
const MIB = 1024 * KIB;
const children = new Set();
const results = { commit: commitOf(root), machine: machine(), quick, rounds: ROUNDS, seconds: SECONDS };

// ---- processes ----

/** Starts a server pinned to `core` (0) and waits until it answers. `checkout`: where Hookwatch's dist/ is. */
async function startServer(kind, env = {}, nodeFlags = [], checkout = root, core = 0) {
  const port = await freePort();
  const script = kind === 'hookwatch' ? `${checkout}/dist/main.js` : kind === 'hookwatch-gc' ? 'bench/gc-server.mjs' : `bench/baselines/${kind}.mjs`;
  const child = spawn('taskset', ['-c', String(core), process.execPath, ...(kind === 'hookwatch-gc' ? ['--expose-gc'] : []), ...nodeFlags, script], {
    cwd: root,
    env: { ...benchServerEnv(port), ...env },
    stdio: ['ignore', 'inherit', 'inherit', ...(kind === 'hookwatch-gc' ? ['ipc'] : [])],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const hookwatch = kind.startsWith('hookwatch');
      const response = await fetch(`http://127.0.0.1:${port}${hookwatch ? '/healthz' : '/'}`, { method: hookwatch ? 'GET' : 'POST', body: hookwatch ? undefined : 'x' });
      if (response.ok || response.status === 404) break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${kind} did not start`);
      await sleep(100);
    }
  }
  return { kind: kind.startsWith('hookwatch') ? 'hookwatch' : kind, port, pid: child.pid, child };
}

/** A watcher process on core 1; resolves once its sockets are open. */
async function startWatcher(server, options = {}) {
  // Both relays take a WebSocket on /ws and send it every body as is.
  const target = server.kind === 'hookwatch' ? 'hookwatch' : 'naive';
  const child = fork(fileURLToPath(new URL('watcher.mjs', import.meta.url)), [JSON.stringify({ target, port: server.port, ...options })], {
    execPath: 'taskset',
    execArgv: ['-c', '1', process.execPath],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const ready = await nextMessage(child, (m) => m.ready, 120_000);
  return {
    child,
    url: ready.url,
    urls: ready.urls,
    reset: async () => {
      child.send('reset');
      await nextMessage(child, (m) => m.reset, 5000);
    },
    report: async () => {
      child.send('report');
      return nextMessage(child, (m) => 'received' in m, 5000);
    },
    stop: () => child.send('exit'),
  };
}

function nextMessage(child, match, timeoutMs) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error('child did not answer'));
    }, timeoutMs);
    const onMessage = (message) => {
      if (!match(message)) return;
      done();
      resolve(message);
    };
    const onExit = (code) => {
      done();
      reject(new Error(`child exited ${code}`));
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

function stopAll() {
  for (const child of children) child.kill('SIGKILL');
}
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));

const cpuSeconds = (pid) => {
  const { user, system } = cpuTimes(pid);
  return user + system;
};
/** RSS and V8 heap in use after a full GC, for a server started as 'hookwatch-gc'. */
async function settledMemory(server) {
  const done = nextMessage(server.child, (message) => message?.gcDone, 10_000);
  server.child.send('gc');
  const { heapUsed, heapTotal } = await done;
  return { rss: rssBytes(server.pid), heapUsed, heapTotal };
}
const rssBytes = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * KIB;
/** Per-core [busy, total] jiffies for cores 0 and 1, from /proc/stat. */
const coreTimes = () =>
  readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu[01] /.test(line))
    .map((line) => {
      const ticks = line.split(/\s+/).slice(1, 9).map(Number);
      const total = ticks.reduce((a, b) => a + b, 0);
      return [total - ticks[3] - ticks[4], total];
    });
const coresBusy = (before) => coreTimes().map(([busy, total], i) => (busy - before[i][0]) / Math.max(1, total - before[i][1]));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// ---- load ----

const pads = new Map();
/** A JSON body of about `size` bytes carrying its send time, made fresh for every request. */
function timedBody(size) {
  let pad = pads.get(size);
  if (pad === undefined) pads.set(size, (pad = `,"pad":"${'x'.repeat(Math.max(0, size - 40))}"}`));
  return `{"t":${(performance.timeOrigin + performance.now()).toFixed(3)}${pad}`;
}

/**
 * Sends at a steady `rate` per second for `seconds` (autocannon's rate option sends each second's
 * quota in a burst, which measures bursts, not a fixed rate). Each body is stamped as it is sent.
 */
async function pacedLoad(url, rate, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const total = rate * seconds;
  const started = performance.now();
  let sent = 0;
  let ok = 0;
  let failed = 0;
  const inFlight = new Set();
  const fire = () =>
    new Promise((resolve) => {
      const body = timedBody(KIB);
      const req = httpRequest(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode >= 200 && res.statusCode < 300) ok++;
          else failed++;
          resolve();
        });
      });
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(body);
    });
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    while (sent < due) {
      const pending = fire();
      inFlight.add(pending);
      pending.then(() => inFlight.delete(pending));
      sent++;
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  agent.destroy();
  return { '2xx': ok, non2xx: failed, errors: 0, timeouts: 0, elapsedSeconds: (performance.now() - started) / 1000 };
}

/** Waits until the watcher has stopped receiving (the tail of the previous load). */
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

function load(url, options) {
  const { size = KIB, body, seconds = SECONDS, connections = CONNECTIONS, label: _label, fanOut: _fanOut, knownRate: _knownRate, otherPids: _otherPids, ...rest } = options;
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
        ...(body === undefined ? { requests: [{ setupRequest: (request) => ({ ...request, body: timedBody(size) }) }] } : { body }),
        ...rest,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/**
 * One measured run. The warm-up (not counted) finds the rate; the measured part then sends a
 * fixed number of requests (about `seconds` worth) and waits for every answer, so "sent" is
 * exact and every delivery can be accounted for.
 */
async function measure(server, url, watcher, options = {}) {
  // The warm-up finds the rate. A server measured in an earlier round is warm and its rate known:
  // `knownRate` skips the warm-up, so that more, shorter rounds fit in the same time.
  let rate = options.knownRate;
  if (rate === undefined) {
    const warm = options.pacedRate ? await pacedLoad(url, options.pacedRate, WARMUP_SECONDS) : await load(url, { ...options, seconds: WARMUP_SECONDS });
    rate = warm['2xx'] / WARMUP_SECONDS;
  }
  await settle(watcher, options.fanOut ? 300 : 100);
  await watcher?.reset();
  const amount = Math.max(100, Math.round(rate * SECONDS));
  const cpuBefore = cpuTimes(server.pid);
  // Other processes the run works (the Redis phase: the watcher's instance, Redis itself).
  const others = Object.entries(options.otherPids ?? {});
  const othersBefore = others.map(([, pid]) => cpuSeconds(pid));
  const coresBefore = coreTimes();
  const started = performance.now();
  const result = options.pacedRate ? await pacedLoad(url, options.pacedRate, SECONDS) : await load(url, { ...options, amount, seconds: undefined });
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuTimes(server.pid);
  const othersCpu = others.map(([, pid], i) => cpuSeconds(pid) - othersBefore[i]);
  const cpuUser = cpuAfter.user - cpuBefore.user;
  const cpuSystem = cpuAfter.system - cpuBefore.system;
  const cpu = cpuUser + cpuSystem;
  const busy = coresBusy(coresBefore);
  const sent = result['2xx'];
  let delivery;
  if (watcher) {
    // Let the last messages land before counting.
    const expected = sent * (options.fanOut ?? 1);
    const deadline = Date.now() + 5000;
    for (;;) {
      delivery = await watcher.report();
      if (delivery.received >= expected || Date.now() > deadline) break;
      await sleep(50);
    }
  }
  const run = {
    rps: sent / elapsedSeconds,
    sent,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMicrosPerRequest: (cpu / Math.max(1, sent)) * 1e6,
    // In the process (JavaScript, V8, libuv) and in the kernel (system calls, loopback TCP).
    userMicrosPerRequest: (cpuUser / Math.max(1, sent)) * 1e6,
    systemMicrosPerRequest: (cpuSystem / Math.max(1, sent)) * 1e6,
    // Share of each core in use during the run: shows which side limited it.
    coresBusy: busy,
    othersMicrosPerRequest: Object.fromEntries(others.map(([name], i) => [name, (othersCpu[i] / Math.max(1, sent)) * 1e6])),
    delivery,
  };
  const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '—');
  console.error(
    `  ${options.label}: ${run.rps.toFixed(0)} req/s, ${run.cpuMicrosPerRequest.toFixed(0)} µs/req (user ${run.userMicrosPerRequest.toFixed(0)}, system ${run.systemMicrosPerRequest.toFixed(0)}), ` +
      `p50 ${ms(delivery?.p50)} p99 ${ms(delivery?.p99)} ms, cores busy ${busy.map((b) => b.toFixed(2)).join('/')}` +
      others.map(([name]) => `, ${name} ${run.othersMicrosPerRequest[name].toFixed(0)} µs/req`).join(''),
  );
  return run;
}

// ---- phases ----

/** Round `round`'s order: as listed in even rounds, reversed in odd ones, so no server always goes first. */
const orderOf = (kinds, round) => (round % 2 === 0 ? kinds : [...kinds].reverse());

async function throughputPhase() {
  // The builds measured: this one, and with --compare the other one, in every round beside it.
  const builds = ['hookwatch', ...comparedKinds];
  // With --compare the capture rounds are for judging a change: the lean relay and both builds.
  const captureKinds = compareDir === undefined ? ['bare-http', 'lean-relay', 'naive-relay', 'hookwatch'] : ['lean-relay', ...builds];
  const relayAndBuilds = ['lean-relay', ...builds];
  const phases = { capture: runs('capture') ? captureKinds : [], latency: runs('latency') ? relayAndBuilds : [], fanout: runs('fanout') ? relayAndBuilds : [] };
  const servers = {};
  const watchers = {};
  const urls = {};
  for (const kind of new Set([...phases.capture, ...phases.latency, ...phases.fanout])) {
    const compared = comparedKinds.indexOf(kind);
    servers[kind] = compared === -1 ? await startServer(kind) : await startServer('hookwatch', {}, [], compareDirs[compared]);
    if (kind !== 'bare-http') watchers[kind] = await startWatcher(servers[kind]);
    urls[kind] = watchers[kind]?.url ?? `http://127.0.0.1:${servers[kind].port}/hook`;
  }
  const summary = (list) => ({
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
    delivered: list.every((r) => r.delivery === undefined) ? undefined : list.reduce((n, r) => n + (r.delivery?.received ?? 0), 0),
    p50Ms: median(list.map((r) => r.delivery?.p50 ?? NaN)),
    p99Ms: median(list.map((r) => r.delivery?.p99 ?? NaN)),
    maxMs: Math.max(...list.map((r) => r.delivery?.max ?? NaN)),
  });
  /** Rounds of every kind, in alternating order; a summary per kind, and the raw runs. */
  const rounds = async (kinds, watcherOf, options) => {
    const lists = Object.fromEntries(kinds.map((kind) => [kind, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of orderOf(kinds, round)) {
        const watcher = watcherOf(kind);
        // Paced runs send at their own rate; closed-loop ones reuse the previous round's.
        const knownRate = options.pacedRate || round === 0 ? undefined : lists[kind][round - 1].rps;
        lists[kind].push(await measure(servers[kind], watcher?.url ?? urls[kind], watcher, { ...options, knownRate, label: `${kind}${options.label}` }));
      }
    }
    return lists;
  };
  const single = (kind) => watchers[kind];

  if (phases.capture.length > 0) {
    const lists = await rounds(phases.capture, single, { label: '' });
    results.throughput = Object.fromEntries(Object.entries(lists).map(([kind, list]) => [kind, summary(list)]));
    // Paired rounds: each round measured the builds next to each other.
    results.comparisons = compareDirs.map((dir, i) => {
      const differences = lists.hookwatch.map((r, round) => r.cpuMicrosPerRequest - lists[comparedKind(i)][round].cpuMicrosPerRequest);
      return { kind: comparedKind(i), dir, commit: commitOf(dir), medianPairedDifferenceMicros: median(differences), roundsLower: differences.filter((d) => d < 0).length };
    });
    results.compared = results.comparisons[0];
  }

  if (phases.latency.length > 0) {
    // Delivery latency at a steady 2,000 req/s.
    const lists = await rounds(phases.latency, single, { pacedRate: 2000, label: ' at 2,000 req/s' });
    results.latency = Object.fromEntries(Object.entries(lists).map(([kind, list]) => [kind, summary(list)]));
  }

  if (phases.fanout.length > 0) {
    // Fan-out: a second endpoint with FAN_OUT watchers, and the lean relay with as many sockets
    // (it sends to every socket it holds, so its single watcher leaves first). Both write
    // FAN_OUT copies of every message through loopback TCP; the relay shows where that alone ends.
    watchers['lean-relay'].stop();
    delete watchers['lean-relay'];
    const fanWatchers = {};
    for (const kind of phases.fanout) fanWatchers[kind] = await startWatcher(servers[kind], { sockets: FAN_OUT });
    const lists = await rounds(phases.fanout, (kind) => fanWatchers[kind], { fanOut: FAN_OUT, label: `, ${FAN_OUT} watchers` });
    for (const watcher of Object.values(fanWatchers)) watcher.stop();
    results.fanOut = Object.fromEntries(Object.entries(lists).map(([kind, list]) => {
      const summarised = summary(list);
      return [kind, { ...summarised, expectedDeliveries: summarised.sent * FAN_OUT }];
    }));
  }

  for (const watcher of Object.values(watchers)) watcher.stop();
  for (const server of Object.values(servers)) server.child.kill();
}

/** The short commit of a checkout, `+dirty` when its tracked files (bench results aside) differ from it. */
function commitOf(dir) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results'], { cwd: dir }).toString().trim() !== '';
    return dirty ? `${commit}+dirty` : commit;
  } catch {
    return 'unknown';
  }
}

/**
 * RSS and heap growth per idle endpoint (one socket each, no requests). A first 50 endpoints
 * warm up the code paths, so their one-time cost is not counted per endpoint.
 */
async function idleEndpoints(count, nodeFlags) {
  const server = await startServer('hookwatch-gc', {}, nodeFlags);
  const warm = await startWatcher(server, { endpoints: 50 });
  const before = await settledMemory(server);
  const idle = await startWatcher(server, { endpoints: count });
  const after = await settledMemory(server);
  warm.stop();
  idle.stop();
  server.child.kill();
  return {
    endpoints: count,
    nodeFlags: nodeFlags.join(' '),
    rssBeforeMiB: before.rss / MIB,
    rssAfterMiB: after.rss / MIB,
    bytesPerEndpoint: (after.rss - before.rss) / count,
    heapBytesPerEndpoint: (after.heapUsed - before.heapUsed) / count,
    heapCommittedBytesPerEndpoint: (after.heapTotal - before.heapTotal) / count,
  };
}

async function memoryPhase() {
  const count = quick ? 1000 : 5000;
  // With default flags V8 grows its young generation once while thousands of sockets connect
  // (up to 2 x 16 MiB, whatever the endpoint count), which reads as several KiB per endpoint.
  // The per-endpoint figure is measured with the young generation at that size from the start.
  results.idleEndpoints = await idleEndpoints(count, ['--min-semi-space-size=16', '--max-semi-space-size=16']);
  results.idleEndpointsDefaultFlags = await idleEndpoints(count, []);

  // Full endpoints: every endpoint holds its 50 requests of the full stored size.
  const cap = 8 * KIB;
  const endpoints = quick ? 200 : 1000;
  const fullServer = await startServer('hookwatch-gc', { MAX_BODY_BYTES: String(cap), REQUESTS_PER_ENDPOINT: '50' });
  const holders = await startWatcher(fullServer, { endpoints });
  const paths = holders.urls.map((url) => new URL(url).pathname);
  let next = 0;
  const body = 'y'.repeat(cap);
  await new Promise((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${fullServer.port}`,
        connections: 20,
        amount: endpoints * 50,
        requests: [{ method: 'POST', body, headers: { 'content-type': 'text/plain' }, setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
  const { rss } = await settledMemory(fullServer);
  holders.stop();
  fullServer.child.kill();
  // What the store may hold: every request, or the default MAX_STORED_BYTES when that is less.
  const bound = Math.min(endpoints * 50 * cap, 256 * MIB);
  results.fullEndpoints = { endpoints, requestsEach: 50, storedCapBytes: cap, boundMiB: bound / MIB, rssMiB: rss / MIB, rssOverBound: rss / bound };
}

/** The hostile 1 MiB bodies of issue #12, each with the content type that made it cost most. */
const ENCODING_CASES = [
  ['ASCII text', () => Buffer.alloc(MIB, 0x61), 'text/plain'],
  ['non-UTF-8 bytes (base64)', () => Buffer.from(Array.from({ length: MIB }, (_, i) => (i * 7919 + 0x80) % 256 | 0x80)), 'application/octet-stream'],
  ['" characters', () => Buffer.alloc(MIB, 0x22), 'text/plain'],
  ['0x01 bytes', () => Buffer.alloc(MIB, 0x01), 'text/plain'],
  ['0x01 bytes as a form', () => Buffer.alloc(MIB, 0x01), 'application/x-www-form-urlencoded'],
];

/** Posts `count` copies of `body` to the endpoints in turn, a few at a time; resolves with the statuses. */
async function postBodies(port, paths, body, contentType, count) {
  const statuses = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const path = paths[next++ % paths.length];
        const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body, headers: { 'content-type': contentType } });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }),
  );
  return statuses;
}

/**
 * Bytes of RSS each stored 1 MiB body costs, per encoding case (after a full GC, stored bytes
 * as the store counts them beside it), and the RSS of a process whose whole stored-bytes budget
 * is full of the worst case, sampled while it fills.
 */
async function storedBodiesPhase() {
  const count = 16;
  results.storedBodies = [];
  for (const [label, makeBody, contentType] of ENCODING_CASES) {
    const server = await startServer('hookwatch-gc', { MAX_STORED_BYTES: String(256 * MIB), MAX_STORED_BYTES_PER_ENDPOINT: String(64 * MIB) });
    const watcher = await startWatcher(server, { endpoints: 1 });
    const paths = [new URL(watcher.urls[0]).pathname];
    const before = await settledMemory(server);
    const statuses = await postBodies(server.port, paths, makeBody(), contentType, count);
    const after = await settledMemory(server);
    const stored = await storedBytesOf(server.port);
    watcher.stop();
    server.child.kill();
    results.storedBodies.push({ label, ok: statuses.filter((s) => s === 200).length, rssBytesPerBody: (after.rss - before.rss) / count, storedBytesPerBody: stored / count });
  }

  const budget = quick ? 64 * MIB : 128 * MIB;
  const server = await startServer('hookwatch', { MAX_STORED_BYTES: String(budget), MAX_STORED_BYTES_PER_ENDPOINT: String(16 * MIB) });
  const watcher = await startWatcher(server, { endpoints: 12 });
  const paths = watcher.urls.map((url) => new URL(url).pathname);
  const rssBefore = rssBytes(server.pid);
  const stopSampling = sampleRss(server.pid);
  const sent = Math.ceil((2.5 * budget) / MIB);
  const [, , , , form] = ENCODING_CASES;
  await postBodies(server.port, paths, form[1](), form[2], sent);
  const peaks = stopSampling();
  const stored = await storedBytesOf(server.port);
  results.fullBudget = { budgetMiB: budget / MIB, sentMiB: sent, storedMiB: stored / MIB, rssBeforeMiB: rssBefore / MIB, rssPeakMiB: Math.max(peaks.firstHalfPeakMiB, peaks.secondHalfPeakMiB), rssAfterMiB: rssBytes(server.pid) / MIB };
  watcher.stop();
  server.child.kill();
}

async function storedBytesOf(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^hookwatch_stored_bytes (\d+)/m.exec(text)?.[1] ?? NaN);
}

/** Samples the server's RSS every 200 ms; the returned stop() gives the peak of each half of the run. */
function sampleRss(pid) {
  const samples = [];
  const timer = setInterval(() => samples.push(rssBytes(pid)), 200);
  return () => {
    clearInterval(timer);
    const middle = Math.floor(samples.length / 2);
    const peak = (list) => (list.length === 0 ? NaN : Math.max(...list) / MIB);
    return { firstHalfPeakMiB: peak(samples.slice(0, middle)), secondHalfPeakMiB: peak(samples.slice(middle)) };
  };
}

async function largeBodiesPhase() {
  const server = await startServer('hookwatch', { MAX_BODY_BYTES: String(512 * KIB), READ_LIMIT_BYTES: String(10 * MIB) });
  const watcher = await startWatcher(server);
  const rss0 = rssBytes(server.pid);
  let stopSampling = sampleRss(server.pid);
  const truncating = await measure(server, watcher.url, watcher, { body: 'z'.repeat(MIB), connections: 10, label: '1 MiB bodies' });
  const oneMiBRss = stopSampling();
  const rss1 = rssBytes(server.pid);
  await load(watcher.url, { body: 'z'.repeat(20 * MIB), connections: 10, seconds: WARMUP_SECONDS });
  const cpuBefore = cpuSeconds(server.pid);
  stopSampling = sampleRss(server.pid);
  const over = await load(watcher.url, { body: 'z'.repeat(20 * MIB), connections: 10 });
  const twentyMiBRss = stopSampling();
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const rss2 = rssBytes(server.pid);
  watcher.stop();
  server.child.kill();
  results.largeBodies = {
    oneMiB: { rps: truncating.rps, delivered: truncating.delivery?.received, sent: truncating.sent, rssBeforeMiB: rss0 / MIB, rssAfterMiB: rss1 / MIB, ...oneMiBRss },
    twentyMiB: {
      rps: over.non2xx / SECONDS,
      answered413: over.non2xx,
      errors: over.errors,
      cpuMillisPerRequest: (cpu / Math.max(1, over.non2xx)) * 1000,
      rssAfterMiB: rss2 / MIB,
      ...twentyMiBRss,
    },
  };
}

function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const cores = readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s*:/gm)?.length ?? 0;
  return { cpu, cores, node: process.version, date: new Date().toISOString() };
}

// ---- report ----

function report() {
  const f = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '—');
  const t = results.throughput;
  const row = (label, r, ratio, expected = r.sent) =>
    `| ${label} | ${f(r.cpuMicrosPerRequest)} | ${f(r.userMicrosPerRequest)} + ${f(r.systemMicrosPerRequest)} | ${ratio} | ${f(r.rps)} | ${r.coresBusy.map((b) => f(b * 100)).join(' / ')} | ` +
    `${r.delivered === undefined ? '—' : `${r.delivered} / ${expected}`} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.maxMs, 1)} |`;
  const targets = [];
  const lines = [
    `Hookwatch benchmark — ${results.commit}, ${results.machine.cpu}, ${results.machine.cores} cores, Node ${results.machine.node}${quick ? ' (quick)' : ''}${only ? ` (only ${only.join(', ')})` : ''}`,
    `${ROUNDS} round(s) of ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, servers in reverse order every other round; medians. Servers on core 0, load and watchers on core 1.`,
    'Headline: server CPU per request (utime + stime of the server process over a fixed request count). req/s is shown, not judged: core 1 caps it.',
  ];
  const name = (kind) => {
    const compared = comparedKinds.indexOf(kind);
    if (compared !== -1) return `hookwatch at ${commitOf(compareDirs[compared])}${compareDirs.length > 1 ? ` (${compareDirs[compared]})` : ''}`;
    return kind === 'hookwatch' && compareDir ? `hookwatch at ${results.commit}` : kind;
  };
  const table = [];
  if (t) {
    const lean = t['lean-relay'];
    table.push(...Object.entries(t).map(([kind, r]) => row(`${name(kind)}, 1 KB POST, 50 conns`, r, `${f(r.cpuMicrosPerRequest / lean.cpuMicrosPerRequest, 2)}x`)));
  }
  const steady = results.latency;
  if (steady) {
    table.push(...Object.entries(steady).map(([kind, r]) => row(`${name(kind)} at a steady 2,000 req/s`, r, `${f(r.cpuMicrosPerRequest / steady['lean-relay'].cpuMicrosPerRequest, 2)}x`)));
  }
  const fan = results.fanOut;
  if (fan) {
    table.push(...Object.entries(fan).map(([kind, r]) => row(`${name(kind)}, ${FAN_OUT} watchers`, r, `${f(r.cpuMicrosPerRequest / fan['lean-relay'].cpuMicrosPerRequest, 2)}x`, r.expectedDeliveries)));
  }
  if (table.length > 0) {
    lines.push('', '| run | server CPU µs/req | user + system | vs lean relay | req/s | cores busy % (0 / 1) | delivered / sent | p50 ms | p99 ms | max ms |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|', ...table, '');
    for (const [phase, list] of [['1 KB POST', t], ['2,000 req/s', steady], [`${FAN_OUT} watchers`, fan]]) {
      if (list) lines.push(`Server CPU µs/req per round, ${phase} (round order alternates): ${Object.entries(list).map(([kind, r]) => `${name(kind)} ${r.cpuMicrosPerRound.join(' ')}`).join('; ')}.`);
    }
  }
  for (const { kind, medianPairedDifferenceMicros, roundsLower } of results.comparisons ?? []) {
    lines.push(`This build (${results.commit}) against ${name(kind)}: median paired difference ${f(medianPairedDifferenceMicros, 1)} µs/req, lower in ${roundsLower} of ${ROUNDS} rounds.`);
  }
  if (t) {
    const lean = t['lean-relay'];
    targets.push(['capture-and-deliver CPU <= 1.0x the lean relay (µs/req ratio)', t.hookwatch.cpuMicrosPerRequest / lean.cpuMicrosPerRequest, t.hookwatch.cpuMicrosPerRequest <= lean.cpuMicrosPerRequest]);
    // A closed loop keeps CONNECTIONS requests in flight; when the server is the bottleneck they
    // queue after their send time was stamped, so latency cannot fall below CONNECTIONS / rate
    // (Little's law). Where the load generator is the bottleneck the queue is before the stamp.
    const floor = (rps) => f((CONNECTIONS / rps) * 1000, 2);
    lines.push(`At saturation ${CONNECTIONS} requests are in flight: ${CONNECTIONS} / rate = ${floor(t.hookwatch.rps)} ms for Hookwatch, ${floor(lean.rps)} ms for the lean relay, the least delivery latency a server-bound run can show.`);
  }
  if (steady) {
    const [mine, relay] = [steady.hookwatch, steady['lean-relay']];
    targets.push(["p99 at 2,000 req/s <= the lean relay's + 1 ms, nothing lost (ms over the relay's)", mine.p99Ms - relay.p99Ms, mine.p99Ms <= relay.p99Ms + 1 && mine.delivered >= mine.sent]);
  }
  if (fan) {
    // Judged as server capacity (1 / CPU per request) with FAN_OUT watchers against one watcher
    // (the single-watcher figure from the capture rounds, or else the steady-rate ones).
    const one = t?.hookwatch ?? steady?.hookwatch;
    if (one) {
      const capacity = one.cpuMicrosPerRequest / fan.hookwatch.cpuMicrosPerRequest;
      lines.push(
        `Fan-out to ${FAN_OUT}: the server's capacity (1 / CPU per request) is ${f(capacity, 2)}x its single-watcher capacity${t ? `; in req/s ${f(fan.hookwatch.rps / t.hookwatch.rps, 2)}x (not judged)` : ''}. ` +
          (t ? `The lean relay's: ${f(t['lean-relay'].cpuMicrosPerRequest / fan['lean-relay'].cpuMicrosPerRequest, 2)}x.` : ''),
      );
      targets.push([`fan-out to ${FAN_OUT} >= 0.5x single-watcher throughput, nothing lost (capacity ratio)`, capacity, capacity >= 0.5 && fan.hookwatch.delivered >= fan.hookwatch.expectedDeliveries]);
    }
  }
  lines.push('');
  const idle = results.idleEndpoints;
  if (idle) {
    const plain = results.idleEndpointsDefaultFlags;
    lines.push(
      `Idle endpoints: ${idle.endpoints} with one socket each, young generation fixed at 16 MiB: RSS ${f(idle.rssBeforeMiB, 1)} -> ${f(idle.rssAfterMiB, 1)} MiB, ` +
        `${f(idle.bytesPerEndpoint / KIB, 2)} KiB per endpoint (V8 heap in use ${f(idle.heapBytesPerEndpoint / KIB, 2)} KiB of it).`,
      `  With default V8 flags: ${f(plain.bytesPerEndpoint / KIB, 2)} KiB per endpoint; heap in use ${f(plain.heapBytesPerEndpoint / KIB, 2)} KiB, heap committed ${f(plain.heapCommittedBytesPerEndpoint / KIB, 2)} KiB (the young generation growing once).`,
    );
    targets.push(['idle endpoint with its socket <= 10 KiB RSS', idle.bytesPerEndpoint / KIB, idle.bytesPerEndpoint <= 10 * KIB]);
  }
  const full = results.fullEndpoints;
  if (full) {
    lines.push(`Full endpoints: ${full.endpoints} x 50 requests x ${full.storedCapBytes / KIB} KiB stored cap: stored at most ${f(full.boundMiB)} MiB (the lesser of the product and the default MAX_STORED_BYTES), RSS ${f(full.rssMiB)} MiB (${f(full.rssOverBound, 2)}x the bound).`);
  }
  if (results.storedBodies) {
    lines.push('Stored 1 MiB bodies (16 per case, RSS after a full GC):');
    for (const row of results.storedBodies) {
      lines.push(`  ${row.label.padEnd(26)} RSS ${f(row.rssBytesPerBody / MIB, 2)} MiB per body, counted ${f(row.storedBytesPerBody / MIB, 2)} MiB (${row.ok}/16 accepted)`);
    }
  }
  const budget = results.fullBudget;
  if (budget) {
    lines.push(
      `Full budget: MAX_STORED_BYTES ${budget.budgetMiB} MiB, ${budget.sentMiB} x 1 MiB 0x01 form bodies sent: stored ${f(budget.storedMiB)} MiB, ` +
        `RSS ${f(budget.rssBeforeMiB)} -> peak ${f(budget.rssPeakMiB)} MiB, ${f(budget.rssAfterMiB)} after (peak ${f((budget.rssPeakMiB - budget.rssBeforeMiB) / budget.budgetMiB, 2)}x the budget above the start).`,
    );
  }
  const large = results.largeBodies;
  if (large) {
    lines.push(
      `Large bodies (stored cap 512 KiB, read limit 10 MiB): 1 MiB bodies ${f(large.oneMiB.rps)} req/s, delivered ${large.oneMiB.delivered} / ${large.oneMiB.sent}, ` +
        `RSS ${f(large.oneMiB.rssBeforeMiB)} -> ${f(large.oneMiB.rssAfterMiB)} MiB (peak ${f(large.oneMiB.firstHalfPeakMiB)} in the first half of the run, ${f(large.oneMiB.secondHalfPeakMiB)} in the second); ` +
        `20 MiB bodies answered 413 ${f(large.twentyMiB.rps)} /s (${large.twentyMiB.answered413} in ${SECONDS} s), RSS peak ${f(large.twentyMiB.firstHalfPeakMiB)} then ${f(large.twentyMiB.secondHalfPeakMiB)} MiB, ${f(large.twentyMiB.rssAfterMiB)} after.`,
    );
  }
  if (results.redis) {
    const redis = redisReport(results.redis, f);
    lines.push(...redis.lines);
    targets.push(...redis.targets);
  }
  results.targets = targets.map(([name, value, holds]) => ({ name, value, holds }));
  lines.push('', 'Targets:', ...targets.map(([name, value, holds]) => `  ${holds ? 'HOLDS' : 'MISSES'}  ${name}: ${f(value, 2)}`));
  const text = lines.join('\n');
  console.log(text);
  const out = new URL('results/', import.meta.url);
  mkdirSync(out, { recursive: true });
  writeFileSync(new URL('latest.json', out), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(new URL('latest.md', out), `${text}\n`);
  appendFileSync(new URL('history.jsonl', out), `${JSON.stringify(historyLine())}\n`);
  console.log(`\nWrote bench/results/latest.json and latest.md, appended a line to history.jsonl`);
}

/** One line per run: which code, when, and the headline ratios. */
function historyLine() {
  const round2 = (n) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : null);
  const cpuOf = (list) => list && Object.fromEntries(Object.entries(list).map(([kind, r]) => [kind, round2(r.cpuMicrosPerRequest)]));
  const { throughput: t, latency: steady, fanOut: fan } = results;
  const one = t?.hookwatch ?? steady?.hookwatch;
  return {
    commit: results.commit,
    date: results.machine.date,
    options: process.argv.slice(2).join(' '),
    cpuMicrosPerRequest: cpuOf(t),
    hookwatchCpuVsLean: t && round2(t.hookwatch.cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
    naiveCpuVsLean: t?.['naive-relay'] && round2(t['naive-relay'].cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
    compared: results.comparisons?.length ? results.comparisons.map((compared) => ({
      commit: compared.commit,
      dir: compared.dir,
      cpuVsLean: round2(t[compared.kind].cpuMicrosPerRequest / t['lean-relay'].cpuMicrosPerRequest),
      medianPairedDifferenceMicros: round2(compared.medianPairedDifferenceMicros),
      roundsLower: `${compared.roundsLower}/${results.rounds}`,
    })) : undefined,
    p99At2000OverLeanMs: steady && round2(steady.hookwatch.p99Ms - steady['lean-relay'].p99Ms),
    fanOutCapacity: fan && one && round2(one.cpuMicrosPerRequest / fan.hookwatch.cpuMicrosPerRequest),
    idleKiBPerEndpoint: results.idleEndpoints && round2(results.idleEndpoints.bytesPerEndpoint / KIB),
    redis: results.redis && {
      throughputVsMemory: round2(results.redis.redisRps / results.redis.memoryRps),
      addedP99Ms: round2(results.redis.redisP99 - results.redis.memoryP99),
      cpuMicrosPerRequest: {
        memory: round2(results.redis.memoryCpuMicros),
        sender: round2(results.redis.redisSenderCpuMicros),
        watcherInstance: round2(results.redis.redisWatcherInstanceCpuMicros),
        redis: round2(results.redis.redisServerCpuMicros),
      },
    },
    targetsHeld: `${results.targets.filter((target) => target.holds).length}/${results.targets.length}`,
  };
}

// ---- main ----

if (process.env.HOOKWATCH_BENCH_PINNED !== '1') {
  // Re-run this script pinned to core 1, away from the servers.
  execFileSync('npm', ['run', 'build:server', '--silent'], { cwd: root, stdio: 'inherit' });
  const pinned = spawn('taskset', ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, HOOKWATCH_BENCH_PINNED: '1' },
  });
  pinned.on('exit', (code) => process.exit(code ?? 1));
} else {
  // The whole run's hard stop: SECONDS + 5 s per measured run (a run takes SECONDS + 2 or so) and 2 minutes
  // for the memory and large-body phases; 390 s for the default run (which takes about 170).
  const runsPerRound =
    (runs('capture') ? (compareDir === undefined ? 4 : 2 + compareDirs.length) : 0) + (runs('latency') ? 2 + compareDirs.length : 0) + (runs('fanout') ? 2 + compareDirs.length : 0);
  // The Redis phase (only when asked for): 4 measured runs per round, and three servers to start.
  const redisRuns = only?.includes('redis') ? ROUNDS * 4 : 0;
  const BUDGET_MS = 30_000 + ROUNDS * runsPerRound * (SECONDS + 5) * 1000 + redisRuns * (SECONDS + 10) * 1000 + (runs('memory') || runs('large') ? 120_000 : 0);
  const started = Date.now();
  const hardStop = setTimeout(() => {
    console.error(`bench: over its time budget (${Math.round(BUDGET_MS / 1000)} s for these options), stopping`);
    process.exit(1);
  }, BUDGET_MS);
  try {
    if (THROUGHPUT_PHASES.some(runs)) await throughputPhase();
    if (runs('memory')) {
      await memoryPhase();
      await storedBodiesPhase();
    }
    if (runs('large')) await largeBodiesPhase();
    // Needs a Redis (REDIS_URL, else 127.0.0.1:6379): only when asked for.
    if (only?.includes('redis')) results.redis = await redisPhase({ startServer, startWatcher, measure, rounds: ROUNDS });
    report();
    console.log(`Total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    clearTimeout(hardStop);
    stopAll();
  }
  process.exit(0);
}
