// @ts-check
// node bench/profile.mjs [--server=hookwatch|lean-relay|naive-relay] [--seconds=N] [--interval=µs] [--checkout=DIR] [--sockets=N] [--strace | --io]
// Profiles one server (pinned to core 0) with `node --cpu-prof` under the bench's capture load
// (1 KB JSON POSTs, 50 connections, one watcher or --sockets=N on one endpoint; load and watcher on core 1), then prints the
// top self-time frames, grouped by where their code lives (our dist/, fastify, ws, node:
// internals, GC). --strace counts the server's system calls per request instead (strace -c, which
// slows the server several times over, so its turns batch more); --io counts only read and write
// calls (/proc/<pid>/io, no slowdown) with the server's CPU per request.
// Traffic goes to 127.0.0.1 only and the run stops by itself.
import { execFileSync, fork, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { benchServerEnv, cpuTimes, freePort } from './server-env.mjs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = fileURLToPath(new URL('..', import.meta.url));
const option = (name, fallback) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const kind = option('server', 'hookwatch');
const seconds = Number(option('seconds', '8'));
const interval = Number(option('interval', '100'));
const checkout = resolve(option('checkout', root));
const top = Number(option('top', '40'));
const sockets = Number(option('sockets', '1'));
const straceMode = process.argv.includes('--strace');
const ioMode = process.argv.includes('--io');

if (process.env.HOOKWATCH_BENCH_PINNED !== '1') {
  if (checkout === resolve(root))
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
  const hardStop = setTimeout(
    () => {
      console.error('profile: over its time budget, stopping');
      process.exit(1);
    },
    (seconds + 60) * 1000,
  );
  const children = new Set();
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-profile-'));
  const script = kind === 'hookwatch' ? `${checkout}/dist/main.js` : `bench/baselines/${kind}.mjs`;
  const server = spawn(
    'taskset',
    [
      '-c',
      '0',
      process.execPath,
      ...(straceMode || ioMode ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${interval}`]),
      script,
    ],
    {
      cwd: root,
      env: benchServerEnv(port),
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  children.add(server);
  const exited = new Promise((done) => server.on('exit', done));
  for (let i = 0; ; i++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${kind === 'hookwatch' ? '/healthz' : '/'}`, {
        method: kind === 'hookwatch' ? 'GET' : 'POST',
        body: kind === 'hookwatch' ? undefined : 'x',
      });
      if (response.ok || response.status === 404) break;
    } catch {
      if (i > 150) throw new Error('server did not start');
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  const watcher = fork(
    fileURLToPath(new URL('watcher.mjs', import.meta.url)),
    [JSON.stringify({ target: kind === 'hookwatch' ? 'hookwatch' : 'naive', port, sockets })],
    {
      execPath: 'taskset',
      execArgv: ['-c', '1', process.execPath],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  children.add(watcher);
  const { url } = await new Promise((done) =>
    watcher.on('message', (/** @type {any} */ message) => message.ready && done(message)),
  );
  console.error(`${sockets} watcher socket(s) open`);
  const target = url ?? `http://127.0.0.1:${port}/hook`;
  const pad = `,"pad":"${'x'.repeat(1024 - 40)}"}`;
  let strace;
  if (straceMode) {
    strace = spawn('strace', ['-c', '-f', '-p', String(server.pid), '-o', join(dir, 'strace.txt')], {
      stdio: 'ignore',
    });
    children.add(strace);
    await new Promise((done) => setTimeout(done, 500));
  }
  const ioBefore = ioMode ? readCounters(server.pid) : undefined;
  const result = await new Promise((done, fail) =>
    autocannon(
      {
        url: target,
        connections: 50,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              body: `{"t":${(performance.timeOrigin + performance.now()).toFixed(3)}${pad}`,
            }),
          },
        ],
      },
      (error, res) => (error ? fail(error) : done(res)),
    ),
  );
  watcher.send('exit');
  if (ioBefore) {
    const after = readCounters(server.pid);
    const per = (name) => ((after[name] - ioBefore[name]) / result['2xx']).toFixed(name === 'cpuMicros' ? 1 : 3);
    console.log(
      `${kind}: ${result['2xx']} requests in ${seconds} s (${Math.round(result['2xx'] / seconds)} req/s); per request: ${per('cpuMicros')} µs CPU, ${per('syscr')} read calls, ${per('syscw')} write calls (write and writev), ${per('wchar')} bytes written`,
    );
    server.kill('SIGKILL');
    process.exit(0);
  }
  if (strace) {
    const stopped = new Promise((done) => strace.on('exit', done));
    strace.kill('SIGINT');
    await stopped;
    const lines = readFileSync(join(dir, 'strace.txt'), 'utf8').split('\n');
    console.log(`${kind}: ${result['2xx']} requests in ${seconds} s; system calls per request:`);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      const calls = Number(fields[3]);
      if (Number.isFinite(calls) && calls > 0 && fields.length >= 5)
        console.log(`  ${(calls / result['2xx']).toFixed(3).padStart(8)}  ${fields.at(-1)}`);
    }
    server.kill('SIGKILL');
    process.exit(0);
  }
  server.kill('SIGINT');
  await exited;
  clearTimeout(hardStop);
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  summarise(profile, result['2xx']);
  console.log(`\nProfile: ${join(dir, file)}`);
  process.exit(0);
}

/** The process's read and write system calls and bytes (/proc/<pid>/io) and its CPU time in µs. */
function readCounters(pid) {
  const io = Object.fromEntries(
    readFileSync(`/proc/${pid}/io`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': '))
      .map(([name, value]) => [name, Number(value)]),
  );
  const { user, system } = cpuTimes(pid);
  return { ...io, cpuMicros: (user + system) * 1e6 };
}

/** Where a frame's code lives. */
function placeOf(url, functionName) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.includes('/node_modules/'))
    return url
      .split('/node_modules/')
      .pop()
      .split('/')[0]
      .replace(/^@[^/]+$/, (scope) => scope);
  if (url.startsWith('node:')) return 'node:';
  if (url.includes('/dist/') || url.includes('/bench/')) return 'ours';
  return url;
}

function summarise(profile, requests) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const frames = new Map();
  const places = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    if (callFrame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    total += micros;
    const file = callFrame.url
      .replace(/^file:\/\//, '')
      .replace(root, '')
      .replace(/.*node_modules\//, '');
    const key = `${callFrame.functionName || '(anonymous)'} ${file}${callFrame.url ? `:${callFrame.lineNumber + 1}` : ''}`;
    frames.set(key, (frames.get(key) ?? 0) + micros);
    const place = placeOf(callFrame.url, callFrame.functionName);
    places.set(place, (places.get(place) ?? 0) + micros);
  }
  const perRequest = (micros) => (micros / requests).toFixed(2);
  console.log(
    `${kind}: ${requests} requests in ${seconds} s; sampled CPU (not idle) ${(total / 1e6).toFixed(2)} s = ${perRequest(total)} µs/req; idle ${(idle / 1e6).toFixed(2)} s`,
  );
  console.log('\nSelf time by place (µs/req):');
  for (const [place, micros] of [...places].sort((a, b) => b[1] - a[1]))
    console.log(`  ${perRequest(micros).padStart(7)}  ${((micros / total) * 100).toFixed(1).padStart(5)}%  ${place}`);
  console.log(`\nTop ${top} self-time frames (µs/req):`);
  for (const [key, micros] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${perRequest(micros).padStart(7)}  ${((micros / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
}
