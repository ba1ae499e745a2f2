import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readdir, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The built CLI, run the way npm's bin shim runs it: `node dist/cli/main.js`. */
export const cliPath = join(root, 'dist', 'cli', 'main.js');

async function newestSourceMs(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestSourceMs(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, (await stat(path)).mtimeMs);
  }
  return newest;
}

async function isBuildStale(): Promise<boolean> {
  const built = await stat(cliPath).catch(() => undefined);
  return built === undefined || built.mtimeMs < (await newestSourceMs(join(root, 'src')));
}

/**
 * Builds dist/ (`npm run build:server`'s tsc) when it is missing or older than src/. Test files
 * run in parallel, so one builds under a lock directory while the others wait for it: two tsc
 * runs writing the same files would let a test start a half-written CLI.
 */
export async function ensureCliBuilt(timeoutMs = 120_000): Promise<void> {
  if (!(await isBuildStale())) return;
  const lock = join(root, 'node_modules', '.cache', 'hookwatch-cli-build.lock');
  await mkdir(join(root, 'node_modules', '.cache'), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      // A lock left by a killed run is older than any build takes.
      const held = await stat(lock).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > timeoutMs) await rmdir(lock).catch(() => undefined);
      if (Date.now() > deadline) throw new Error('timed out waiting for another test file to build dist/');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (await isBuildStale()) {
      await promisify(execFile)(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
        { cwd: root },
      );
    }
  } finally {
    await rmdir(lock);
  }
}

export interface CliRun {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in the stream's text so far or to come. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves once `count` lines matching `pattern` have been printed to the stream. */
  waitForLines(stream: 'stdout' | 'stderr', pattern: RegExp, count: number, timeoutMs?: number): Promise<string[]>;
  exited: Promise<number | null>;
  /** Sends a signal and waits for the exit (killing it if it does not exit in time). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export interface CliOptions {
  stdin?: string;
  /** Added to this process's environment (e.g. a secret for `--verify <sender>:env:<NAME>`). */
  env?: Record<string, string>;
}

/** Starts the CLI as a real child process. */
export function startCli(args: string[], options: CliOptions = {}): CliRun {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: root,
    stdio: 'pipe',
    env: { ...process.env, ...options.env },
  });
  const text = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    text.stdout += chunk.toString();
    notify();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    text.stderr += chunk.toString();
    notify();
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exitCode = code;
      notify();
      resolve(code);
    }),
  );
  if (options.stdin !== undefined) child.stdin.end(options.stdin);

  const waitUntil = <T>(check: () => T | undefined, what: () => string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const listener = () => {
        const found = check();
        if (found !== undefined) {
          finish();
          resolve(found);
        } else if (exitCode !== undefined) {
          finish();
          reject(
            new Error(`CLI exited (${exitCode}) before ${what()}\nstdout:\n${text.stdout}\nstderr:\n${text.stderr}`),
          );
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what()}\nstdout:\n${text.stdout}\nstderr:\n${text.stderr}`,
          ),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      listeners.add(listener);
      listener();
    });

  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    waitFor: (stream, pattern, timeoutMs = 10_000) =>
      waitUntil(
        () => text[stream].match(pattern) ?? undefined,
        () => `${pattern} on ${stream}`,
        timeoutMs,
      ),
    waitForLines: (stream, pattern, count, timeoutMs = 10_000) =>
      waitUntil(
        () => {
          const lines = text[stream].split('\n').filter((line) => pattern.test(line));
          return lines.length >= count ? lines : undefined;
        },
        () => `${count} lines matching ${pattern} on ${stream}`,
        timeoutMs,
      ),
    exited,
    stop: async (signal = 'SIGINT', timeoutMs = 10_000) => {
      if (exitCode !== undefined) return exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(
  args: string[],
  options: CliOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, options);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
