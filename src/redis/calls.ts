import type { Cluster, Redis } from 'ioredis';
import * as scripts from './scripts.js';
import { StoreUnavailableError } from '../store/store.js';

/** What a call fails with (as its cause) when Redis has not answered within REDIS_COMMAND_TIMEOUT_MS. */
const NO_ANSWER = 'no answer from Redis';

/**
 * Whether a call failed because its connection did (closed under it, or not open): what it sent
 * may or may not have run. Not a timeout (Redis may be stalled, and run it later), not an error
 * Redis answered.
 */
export function connectionFailed(error: unknown): boolean {
  return /Connection is closed|connection cut|Stream isn't writeable|ECONNRESET|ECONNREFUSED|EPIPE|MaxRetriesPerRequest/.test(
    String((error as Error).cause ?? error),
  );
}

export type ScriptName = keyof typeof scripts | 'READ_LOGBuffer';
type Command = (...args: Array<string | number | Buffer>) => Promise<unknown>;

export interface RedisCalls {
  /** Runs script `name` with `keys` declared and `args` after them (ARGV): bounded, and StoreUnavailableError on any failure. */
  script(name: ScriptName, keys: string[], args: Array<string | number | Buffer>): Promise<unknown>;
  /** A plain command, bounded like a script. */
  bounded<T>(command: Promise<T>): Promise<T>;
}

/**
 * The store's calls to Redis. Each is bounded by REDIS_COMMAND_TIMEOUT_MS here, whatever the
 * client does. What was in flight when a connection closed fails at once and is not sent again
 * by the client (redis/clients.ts): a capture is tried again by its caller, under its
 * idempotency key (lua/append.lua). Any failure is a StoreUnavailableError, its cause saying
 * what happened.
 */
export function createRedisCalls(redis: Redis | Cluster, commandTimeoutMs: number): RedisCalls {
  // ioredis sends each script by its SHA (EVALSHA) and loads it when Redis does not know it.
  for (const [name, lua] of Object.entries(scripts)) {
    if (typeof lua === 'string' && lua.startsWith('#!lua')) redis.defineCommand(`hookwatch${name}`, { lua });
  }
  const bounded = async <T>(command: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${NO_ANSWER} within ${commandTimeoutMs} ms`)), commandTimeoutMs);
    });
    try {
      return await Promise.race([command, timedOut]);
    } catch (error) {
      throw new StoreUnavailableError(error);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    bounded,
    script(name, keys, args) {
      const method = (redis as unknown as Record<string, Command>)[`hookwatch${name}`] as Command;
      return bounded(method.call(redis, keys.length, ...keys, ...args));
    },
  };
}

/**
 * Every key a script may touch in `partition`, declared: the partition's own (with `instance`'s
 * idempotency set for the scripts that capture), then each endpoint's it is about. The
 * partition's part is the same on every call: built once per partition.
 */
export function keysIn(partition: string, instance: string): (ids: readonly string[], capture: boolean) => string[] {
  const own = scripts.PARTITION_KEYS.map((name) => `${partition}${name}`);
  const capturing = [...own, `${partition}ik:${instance}`];
  return (ids, capture) => {
    const keys = [...(capture ? capturing : own)];
    for (const id of ids) for (const name of scripts.ENDPOINT_KEYS) keys.push(`${partition}${name}${id}`);
    return keys;
  };
}
