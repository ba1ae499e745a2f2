import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { nanoid } from 'nanoid';
import { defaultConfig, type SettingValues } from '../../src/config.js';
import { onRedis } from '../../src/redis/clients.js';
import { storeLimits } from '../../src/store/store.js';
import { freePort } from './instances.js';
import { connectRedis } from './redis.js';
import { startServer, type TestServer } from './server.js';

/**
 * A Hookwatch instance in this process, on Redis with the connections main.ts makes
 * (redis/clients.ts): `overrides` names the Redis (`redisUrl`, …) and a prefix of the test's own.
 */
export async function startOnRedis(
  overrides: Partial<SettingValues>,
): Promise<TestServer & { warnings: () => string }> {
  const config = defaultConfig({ host: '127.0.0.1', port: 0, logLevel: 'warn', ...overrides });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  const { deps, close } = onRedis(config.redis, storeLimits(config), pino({ level: 'warn' }, sink), nanoid(10));
  // As /readyz would: commands fail at once until the connection is up (no offline queue).
  const commands = deps.rateLimitRedis;
  if (commands && commands.status !== 'ready') await once(commands, 'ready');
  const started = await startServer(overrides, { store: deps.store, bus: deps.bus, instanceId: deps.instanceId });
  return {
    ...started,
    warnings: () => lines.join(''),
    close: async () => {
      await started.close();
      await close();
    },
  };
}

/** A private redis-server whose data lives in a folder of its own, so it can save, stop and start again from its snapshot. */
export interface PrivateRedis {
  port: number;
  url: string;
  /** The running process (SIGSTOP and SIGCONT it to stall Redis). */
  process(): ChildProcess;
  /** SHUTDOWN NOSAVE, then the same server again on the same port: it loads its last snapshot (SAVE). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(extraArgs: string[] = []): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-redis-'));
  let child: ChildProcess;
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extraArgs],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = connectRedis(`redis://127.0.0.1:${port}`);
      const pong = await client.ping().catch(() => undefined);
      client.disconnect();
      if (pong === 'PONG') return;
      if (Date.now() > deadline) throw new Error('redis-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    process: () => child,
    restart: async () => {
      await kill();
      await launch();
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
