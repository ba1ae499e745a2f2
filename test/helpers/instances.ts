import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureCliBuilt, root } from './cli.js';
import { connectRedis } from './redis.js';

/** A free TCP port on 127.0.0.1 (for a server process that cannot report its own). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface Instance {
  port: number;
  baseUrl: string;
  wsUrl: string;
  process: ChildProcess;
  /** What it wrote to stderr (its logs at warn and above are on stdout; errors here). */
  output(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: no shutdown at all. */
  kill(): Promise<void>;
}

/** Starts the built server (`node dist/main.js`) as its own process and waits for /healthz. */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  await ensureCliBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], {
    // In memory unless the caller names a Redis (and its own prefix) or a DATA_DIR.
    env: {
      ...process.env,
      REDIS_URL: '',
      DATA_DIR: 'none',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await fetch(`${baseUrl}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`instance did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    baseUrl,
    wsUrl: `ws://127.0.0.1:${port}`,
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A private redis-server on a free port, for faults a shared Redis must not suffer (restarts, pauses). */
export async function startRedisServer(
  port?: number,
): Promise<{ port: number; url: string; stop: () => Promise<void> }> {
  const chosen = port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${chosen}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = connectRedis(url);
    const pong = await client.ping().catch(() => undefined);
    client.disconnect();
    if (pong === 'PONG') break;
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port: chosen,
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
