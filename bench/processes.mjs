// @ts-check
// The processes a run starts: servers pinned to core 0 and watcher processes on core 1, all killed
// by stopAll() however the run ends.
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { root, sleep } from './common.mjs';
import { benchServerEnv, freePort } from './server-env.mjs';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/**
 * @typedef {object} Server
 * @property {string} kind  'hookwatch' for every build of it, else the baseline's name
 * @property {number} port
 * @property {number} pid
 * @property {ChildProcess} child
 */
/**
 * What a watcher counted since its last reset; latencies in ms, NaN when none was measured.
 * @typedef {object} Delivery
 * @property {number} received
 * @property {number} measured
 * @property {number} p50
 * @property {number} p99
 * @property {number} max
 */
/**
 * @typedef {object} Watcher
 * @property {ChildProcess} child
 * @property {string | undefined} url  the watched endpoint's capture URL (Hookwatch only)
 * @property {string[]} urls  one per endpoint, when it opened `endpoints` of them
 * @property {() => Promise<void>} reset
 * @property {() => Promise<Delivery>} report
 * @property {() => void} stop
 */
/** @typedef {{ sockets?: number, endpoints?: number }} WatcherOptions */

/** @type {Set<ChildProcess>} */
const children = new Set();

/** @param {ChildProcess} child */
export function track(child) {
  children.add(child);
  child.on('exit', () => children.delete(child));
}

/** Kills every process the run started. */
export function stopAll() {
  for (const child of children) child.kill('SIGKILL');
}

/**
 * @param {string} kind
 * @param {string} checkout
 */
const scriptOf = (kind, checkout) =>
  kind === 'hookwatch'
    ? `${checkout}/dist/main.js`
    : kind === 'hookwatch-gc'
      ? 'bench/gc-server.mjs'
      : `bench/baselines/${kind}.mjs`;

/**
 * Starts a server pinned to `core` and waits until it answers. `kind` is 'hookwatch', 'hookwatch-gc'
 * (Hookwatch that runs a full GC when asked, for memory readings) or a baseline's name;
 * `checkout`: where Hookwatch's dist/ is.
 * @param {string} kind
 * @param {Record<string, string>} [env]
 * @param {string[]} [nodeFlags]
 * @param {string} [checkout]
 * @param {number} [core]
 * @returns {Promise<Server>}
 */
export async function startServer(kind, env = {}, nodeFlags = [], checkout = root, core = 0) {
  const port = await freePort();
  const gc = kind === 'hookwatch-gc';
  const child = spawn(
    'taskset',
    ['-c', String(core), process.execPath, ...(gc ? ['--expose-gc'] : []), ...nodeFlags, scriptOf(kind, checkout)],
    {
      cwd: root,
      env: { ...benchServerEnv(port), ...env },
      stdio: gc ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'inherit', 'inherit'],
    },
  );
  track(child);
  await untilAnswering(kind, port);
  return {
    kind: kind.startsWith('hookwatch') ? 'hookwatch' : kind,
    port,
    pid: /** @type {number} */ (child.pid),
    child,
  };
}

/**
 * @param {string} kind
 * @param {number} port
 */
async function untilAnswering(kind, port) {
  const hookwatch = kind.startsWith('hookwatch');
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${hookwatch ? '/healthz' : '/'}`, {
        method: hookwatch ? 'GET' : 'POST',
        body: hookwatch ? undefined : 'x',
      });
      if (response.ok || response.status === 404) return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${kind} did not start`);
      await sleep(100);
    }
  }
}

/**
 * A watcher process on core 1; resolves once its sockets are open.
 * @param {Server} server
 * @param {WatcherOptions} [options]
 * @returns {Promise<Watcher>}
 */
export async function startWatcher(server, options = {}) {
  // Both relays take a WebSocket on /ws and send it every body as is.
  const target = server.kind === 'hookwatch' ? 'hookwatch' : 'naive';
  const child = fork(
    fileURLToPath(new URL('watcher.mjs', import.meta.url)),
    [JSON.stringify({ target, port: server.port, ...options })],
    {
      execPath: 'taskset',
      execArgv: ['-c', '1', process.execPath],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  track(child);
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

/**
 * The child's next IPC message that `match` accepts; rejects if none comes in `timeoutMs` or it exits.
 * @param {ChildProcess} child
 * @param {(message: any) => unknown} match
 * @param {number} timeoutMs
 * @returns {Promise<any>}
 */
export function nextMessage(child, match, timeoutMs) {
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
    /** @param {any} message */
    const onMessage = (message) => {
      if (!match(message)) return;
      done();
      resolve(message);
    };
    /** @param {number | null} code */
    const onExit = (code) => {
      done();
      reject(new Error(`child exited ${code}`));
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}
