// npm run bench [-- --quick] [--only=PHASES] [--rounds=N] [--compare=DIR]
// Capture throughput, delivery latency, fan-out, memory and large bodies, each measured against
// baselines started in the same run. Servers run on core 0, this load generator and the watcher
// processes on core 1. Traffic goes to 127.0.0.1 only; every phase is bounded in time.
import { execFileSync, fork, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { redisPhase, redisReport } from './redis-phase.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.argv.includes('--quick');
const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
// --only=throughput,memory,large runs some phases (to reproduce one figure); the report shows what ran.
const only = option('only')?.split(',');
const runs = (phase) => only === undefined || only.includes(phase);
const ROUNDS = Number(option('rounds') ?? (quick ? 1 : 3));
// --compare=DIR: another built checkout of Hookwatch (DIR/dist/main.js), measured in the same
// capture-throughput rounds as this one, alternating: the before/after of a change, in one run.
const compareDir = option('compare') ? resolve(option('compare')) : undefined;
const SECONDS = quick ? 2 : 5;
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
/** Sockets on one endpoint (Hookwatch) or on the relay in the fan-out runs. */
const FAN_OUT = 100;
const KIB = 1024;
const MIB = 1024 * KIB;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const children = new Set();
const results = { machine: machine(), quick, rounds: ROUNDS, seconds: SECONDS };

// ---- processes ----

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a server pinned to core 0 and waits until it answers. `checkout`: where Hookwatch's dist/ is. */
async function startServer(kind, env = {}, nodeFlags = [], checkout = root) {
  const port = await freePort();
  const script = kind === 'hookwatch' ? `${checkout}/dist/main.js` : kind === 'hookwatch-gc' ? 'bench/gc-server.mjs' : `bench/baselines/${kind}.mjs`;
  const child = spawn('taskset', ['-c', '0', process.execPath, ...(kind === 'hookwatch-gc' ? ['--expose-gc'] : []), ...nodeFlags, script], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_ENDPOINT: '0',
      RATE_LIMIT_PER_ADDRESS: '0',
      LIVE_CONNECTS_PER_ADDRESS: '0',
      MAX_ENDPOINTS: '20000',
      // The bench's load and watchers all come from 127.0.0.1: the per-address caps would refuse them.
      MAX_LIVE_SOCKETS_PER_ADDRESS: '100000',
      MAX_CONNECTIONS_PER_ADDRESS: '100000',
      MAX_CONNECTIONS: '100000',
      ...env,
    },
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
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
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
async function settle(watcher) {
  if (!watcher) return;
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const { received } = await watcher.report();
    if (received === last) return;
    last = received;
    await sleep(100);
  }
}

function load(url, options) {
  const { size = KIB, body, seconds = SECONDS, connections = CONNECTIONS, label: _label, fanOut: _fanOut, ...rest } = options;
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
  const warm = options.pacedRate ? await pacedLoad(url, options.pacedRate, WARMUP_SECONDS) : await load(url, { ...options, seconds: WARMUP_SECONDS });
  await settle(watcher);
  await watcher?.reset();
  const amount = Math.max(100, Math.round(warm['2xx'] / WARMUP_SECONDS) * SECONDS);
  const cpuBefore = cpuSeconds(server.pid);
  const coresBefore = coreTimes();
  const started = performance.now();
  const result = options.pacedRate ? await pacedLoad(url, options.pacedRate, SECONDS) : await load(url, { ...options, amount, seconds: undefined });
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
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
    // Share of each core in use during the run: shows which side limited it.
    coresBusy: busy,
    delivery,
  };
  const ms = (n) => (Number.isFinite(n) ? n.toFixed(2) : '—');
  console.error(
    `  ${options.label}: ${run.rps.toFixed(0)} req/s, ${run.cpuMicrosPerRequest.toFixed(0)} µs/req, ` +
      `p50 ${ms(delivery?.p50)} p99 ${ms(delivery?.p99)} ms, cores busy ${busy.map((b) => b.toFixed(2)).join('/')}`,
  );
  return run;
}

// ---- phases ----

async function throughputPhase() {
  const servers = {
    'bare-http': await startServer('bare-http'),
    'naive-relay': await startServer('naive-relay'),
    hookwatch: await startServer('hookwatch'),
  };
  const watchers = { 'naive-relay': await startWatcher(servers['naive-relay']), hookwatch: await startWatcher(servers.hookwatch) };
  const urls = {
    'bare-http': `http://127.0.0.1:${servers['bare-http'].port}/hook`,
    'naive-relay': `http://127.0.0.1:${servers['naive-relay'].port}/hook`,
    hookwatch: watchers.hookwatch.url,
  };
  const runs = { 'bare-http': [], 'naive-relay': [], hookwatch: [] };
  if (compareDir !== undefined) {
    servers.compared = await startServer('hookwatch', {}, [], compareDir);
    watchers.compared = await startWatcher(servers.compared);
    urls.compared = watchers.compared.url;
    runs.compared = [];
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of Object.keys(runs)) runs[kind].push(await measure(servers[kind], urls[kind], watchers[kind], { label: kind }));
  }

  // Delivery latency at a steady 2,000 req/s, Hookwatch and the naive relay alternating.
  const fixed = [];
  const fixedNaive = [];
  for (let round = 0; round < ROUNDS; round++) {
    fixedNaive.push(await measure(servers['naive-relay'], urls['naive-relay'], watchers['naive-relay'], { pacedRate: 2000, label: 'naive-relay at 2,000 req/s' }));
    fixed.push(await measure(servers.hookwatch, urls.hookwatch, watchers.hookwatch, { pacedRate: 2000, label: 'hookwatch at 2,000 req/s' }));
  }

  // Fan-out: a second endpoint with FAN_OUT watchers, and the naive relay with as many sockets
  // (it sends to every socket it holds, so its single watcher leaves first), alternating. Both
  // write FAN_OUT copies of every message through loopback TCP; the relay shows where that
  // alone ends.
  watchers['naive-relay'].stop();
  const fanWatcher = await startWatcher(servers.hookwatch, { sockets: FAN_OUT });
  const fanWatcherNaive = await startWatcher(servers['naive-relay'], { sockets: FAN_OUT });
  const fan = [];
  const fanNaive = [];
  for (let round = 0; round < ROUNDS; round++) {
    fanNaive.push(await measure(servers['naive-relay'], urls['naive-relay'], fanWatcherNaive, { fanOut: FAN_OUT, label: `naive-relay, ${FAN_OUT} watchers` }));
    fan.push(await measure(servers.hookwatch, fanWatcher.url, fanWatcher, { fanOut: FAN_OUT, label: `hookwatch, ${FAN_OUT} watchers` }));
  }

  for (const watcher of [watchers.hookwatch, watchers.compared, fanWatcher, fanWatcherNaive]) watcher?.stop();
  for (const server of Object.values(servers)) server.child.kill();

  const summary = (list) => ({
    rps: median(list.map((r) => r.rps)),
    cpuMicrosPerRequest: median(list.map((r) => r.cpuMicrosPerRequest)),
    sent: list.reduce((n, r) => n + r.sent, 0),
    non2xx: list.reduce((n, r) => n + r.non2xx, 0),
    errors: list.reduce((n, r) => n + r.errors, 0),
    delivered: list.every((r) => r.delivery === undefined) ? undefined : list.reduce((n, r) => n + (r.delivery?.received ?? 0), 0),
    p50Ms: median(list.map((r) => r.delivery?.p50 ?? NaN)),
    p99Ms: median(list.map((r) => r.delivery?.p99 ?? NaN)),
    maxMs: Math.max(...list.map((r) => r.delivery?.max ?? NaN)),
  });
  results.throughput = Object.fromEntries(Object.entries(runs).map(([kind, list]) => [kind, summary(list)]));
  if (compareDir !== undefined) {
    // Per round as well as medians: on a noisy machine the spread says how far to trust the difference.
    const perRound = (list) => list.map((r) => Math.round(r.cpuMicrosPerRequest));
    results.compared = { dir: compareDir, cpuMicrosPerRound: perRound(runs.compared), thisBuildCpuMicrosPerRound: perRound(runs.hookwatch) };
  }
  results.fixedRate = summary(fixed);
  results.fixedRateNaive = summary(fixedNaive);
  const fanOutSummary = (list) => {
    const summarised = summary(list);
    return { ...summarised, expectedDeliveries: summarised.sent * FAN_OUT };
  };
  results.fanOut = fanOutSummary(fan);
  results.fanOutNaive = fanOutSummary(fanNaive);
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
    `| ${label} | ${f(r.rps)} | ${ratio} | ${f(r.cpuMicrosPerRequest)} | ${r.delivered === undefined ? '—' : `${r.delivered} / ${expected}`} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.maxMs, 1)} |`;
  const targets = [];
  const lines = [
    `Hookwatch benchmark — ${results.machine.cpu}, ${results.machine.cores} cores, Node ${results.machine.node}${quick ? ' (quick)' : ''}${only ? ` (only ${only.join(', ')})` : ''}`,
    `${ROUNDS} alternating round(s) of ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up; medians. Servers on core 0, load and watchers on core 1.`,
  ];
  if (t) {
    const relay = t['naive-relay'].rps;
    lines.push(
      '',
      '| run | req/s | vs naive relay | server CPU µs/req | delivered / sent | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...Object.entries(t).map(([kind, r]) => row(`${kind === 'compared' ? `hookwatch at ${compareDir}` : kind}, 1 KB POST, 50 conns`, r, `${f(r.rps / relay, 2)}x`)),
      row('naive-relay at a steady 2,000 req/s', results.fixedRateNaive, '—'),
      row('hookwatch at a steady 2,000 req/s', results.fixedRate, '—'),
      row(`naive-relay, ${FAN_OUT} watchers`, results.fanOutNaive, `${f(results.fanOutNaive.rps / relay, 2)}x of 1 watcher`, results.fanOutNaive.expectedDeliveries),
      row(`hookwatch, ${FAN_OUT} watchers`, results.fanOut, `${f(results.fanOut.rps / t.hookwatch.rps, 2)}x of 1 watcher, ${f(results.fanOut.rps / results.fanOutNaive.rps, 2)}x the relay's`, results.fanOut.expectedDeliveries),
    );
    targets.push(
      ['capture throughput >= 1.0x naive relay', t.hookwatch.rps / relay, t.hookwatch.rps / relay >= 1.0],
      ['p99 at 2,000 req/s <= 5 ms, nothing lost', results.fixedRate.p99Ms, results.fixedRate.p99Ms <= 5 && results.fixedRate.delivered === results.fixedRate.sent],
      ['p99 at saturation <= 10 ms, nothing lost', t.hookwatch.p99Ms, t.hookwatch.p99Ms <= 10 && t.hookwatch.delivered === t.hookwatch.sent],
      [`fan-out to ${FAN_OUT} >= 0.5x single-watcher throughput`, results.fanOut.rps / t.hookwatch.rps, results.fanOut.rps / t.hookwatch.rps >= 0.5 && results.fanOut.delivered === results.fanOut.expectedDeliveries],
    );
  }
  if (t) {
    // A closed loop keeps CONNECTIONS requests in flight; when the server is the bottleneck they
    // queue after their send time was stamped, so latency cannot fall below CONNECTIONS / rate
    // (Little's law). Where the load generator is the bottleneck the queue is before the stamp.
    const floor = (rps) => f((CONNECTIONS / rps) * 1000, 2);
    lines.push('', `At saturation ${CONNECTIONS} requests are in flight: ${CONNECTIONS} / rate = ${floor(t.hookwatch.rps)} ms for Hookwatch, ${floor(t['naive-relay'].rps)} ms for the relay, the least delivery latency a server-bound run can show.`);
  }
  if (results.compared) {
    const { dir, cpuMicrosPerRound, thisBuildCpuMicrosPerRound } = results.compared;
    lines.push('', `Server CPU µs/req per round: this build ${thisBuildCpuMicrosPerRound.join(' ')}; ${dir}: ${cpuMicrosPerRound.join(' ')}.`);
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
  console.log(`\nWrote bench/results/latest.json and latest.md`);
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
  const started = Date.now();
  const hardStop = setTimeout(() => {
    console.error('bench: over its time budget (4 minutes at the default 3 rounds), stopping');
    process.exit(1);
  }, 230_000 * Math.max(1, ROUNDS / 3) * (compareDir === undefined ? 1 : 1.3));
  try {
    if (runs('throughput')) await throughputPhase();
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
