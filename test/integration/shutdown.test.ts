import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SocketClient } from '../helpers/socket-client.js';
import { send } from '../helpers/http.js';
import { connectRedis, dropPrefix, redisUrl, testPrefix } from '../helpers/redis.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Starts src/main.ts as its own process, the way `npm start` runs it, and waits for /healthz. */
async function startProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    // In memory unless `env` says otherwise (CI exports REDIS_URL for the Redis suites).
    env: { ...process.env, REDIS_URL: '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line within 20 s:\n${output}`)), 20_000);
    child.stdout.on('data', () => {
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', () => reject(new Error(`exited early:\n${output}`)));
  });
  return { child, port, exited, output: () => output };
}

describe('process lifecycle', () => {
  it('refuses a bad setting with a clear message and exit status 2', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--max-body-bytes', 'lots'], {
      cwd: root,
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('PORT="eighty"');
    expect(stderr).toContain('--max-body-bytes="lots"');
  });

  const prefixes: string[] = [];
  afterAll(async () => {
    const redis = connectRedis();
    for (const prefix of prefixes) await dropPrefix(redis, prefix);
    await redis.quit();
  });
  const onRedis = () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    return { REDIS_URL: redisUrl, REDIS_PREFIX: prefix };
  };
  const backends: Array<[string, () => Record<string, string>]> = [
    ['in memory', () => ({})],
    ['on Redis', onRedis],
  ];
  it.each(backends)(
    'on SIGTERM finishes an in-flight capture, tells watchers 1001 and exits 0 (%s)',
    async (_name, env) => {
      const server = await startProcess(env());
      const base = `http://127.0.0.1:${server.port}`;
      expect((await send(`${base}/healthz`)).status).toBe(200);
      const { client, welcome } = await SocketClient.create(`ws://127.0.0.1:${server.port}`);

      // A request whose body is still arriving when the signal comes.
      const socket = connect(server.port, '127.0.0.1');
      const path = new URL(welcome.endpoint.url).pathname;
      // Node answers 100 Continue as it hands the request to the app: then it is in flight.
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
      await expect.poll(() => text).toContain('100 Continue');
      socket.write('hello');

      const started = Date.now();
      server.child.kill('SIGTERM');
      expect(await client.closed).toBe(1001);
      // The rest of the body, without ending our side: a sender that half-closes before its answer
      // gets none from Node's HTTP server (it ends the connection on the sender's FIN).
      socket.write('world');
      expect(await answer).toMatch(/^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 200/);
      expect(await server.exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(server.output()).toContain('shutting down');
    },
  );
});
