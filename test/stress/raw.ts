import { connect } from 'node:net';

/** Seeded PRNG (mulberry32): the hostile inputs are the same on every run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RawOutcome {
  /** The status line's code, or 0 when the server answered nothing before closing. */
  status: number;
}

/**
 * Writes `chunks` to a fresh TCP connection (each a write; a number is a pause in ms; 'end'
 * half-closes; 'destroy' cuts the connection) and resolves with the status the server answered,
 * once it closes or `timeoutMs` passes.
 */
export function rawExchange(
  port: number,
  chunks: Array<string | Buffer | number | 'end' | 'destroy'>,
  timeoutMs = 3000,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0) });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk) => {
      if (answer.length < 64) answer += chunk.toString('latin1');
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.once('connect', async () => {
      for (const chunk of chunks) {
        if (finished || socket.destroyed) return;
        if (typeof chunk === 'number') await new Promise((resolve) => setTimeout(resolve, chunk));
        else if (chunk === 'end') socket.end();
        else if (chunk === 'destroy') return finish();
        else socket.write(chunk);
      }
    });
  });
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await (tasks[index] as () => Promise<T>)();
      }
    }),
  );
  return results;
}
