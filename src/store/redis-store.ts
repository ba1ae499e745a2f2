import type { Redis } from 'ioredis';
import type { ResponseConfig } from '../shared/response-config.js';
import type { EndpointKind, EndpointRecord, Store, StoreLimits, StoredRequest } from './store.js';
import { redactsSecrets, STORED_REQUEST_OVERHEAD_BYTES, StoreUnavailableError } from './store.js';
import { answeredMessage, DELETED_MESSAGE, extendedMessage, responderMessage, responseChangedMessage } from '../shared/server-messages.js';
import * as scripts from './redis-scripts.js';

export interface RedisStoreOptions extends StoreLimits {
  /** A connection main.ts owns (opened, closed and given an 'error' listener there). */
  redis: Redis;
  /** Every key and channel starts with it (`hookwatch:v1:`). */
  prefix: string;
  /** The clock deadlines are judged by (tests inject one). */
  now?: () => number;
}

/** Endpoints swept per script run, so one sweep never blocks Redis for long. */
const SWEEP_BATCH = 200;
/** Bytes of response configurations the instance remembers (see `known`); a configuration can be 64 KiB. */
const KNOWN_BYTES = 8 * 1024 * 1024;

type Command = (...args: Array<string | number>) => Promise<unknown>;

/**
 * Endpoints, requests and lifetimes in Redis, shared by every instance: each operation is one
 * script (redis-scripts.ts), so it is atomic and one round trip. Requests are announced on the
 * Redis bus's channels by the script that stores them. Any Redis failure (down, or slower than
 * the client's command timeout) surfaces as StoreUnavailableError.
 */
export function createRedisStore(options: RedisStoreOptions): Store {
  const { redis, prefix } = options;
  const limits = [options.requestsPerEndpoint, options.maxStoredBytesPerEndpoint, options.maxStoredBytes, STORED_REQUEST_OVERHEAD_BYTES];
  const now = options.now ?? Date.now;
  // ioredis sends each script by its SHA (EVALSHA) and loads it when Redis does not know it.
  for (const [name, lua] of Object.entries(scripts)) redis.defineCommand(`hookwatch${name}`, { numberOfKeys: 0, lua });
  /** Runs a script; `Buffer` variants give bulk replies as Buffers (stored messages stay bytes). */
  const run = (name: keyof typeof scripts | 'READ_LOGBuffer', ...args: Array<string | number>): Promise<unknown> => {
    const method = (redis as unknown as Record<string, Command>)[`hookwatch${name}`] as Command;
    return method.call(redis, prefix, ...args).catch((error: unknown) => Promise.reject(new StoreUnavailableError(error)));
  };

  /**
   * What this instance last saw of the endpoints it captured for: their kind, and their response
   * configuration with its version. A capture then costs one script (APPEND), not a lookup
   * first: APPEND refuses a gone endpoint, and a draft built for an older version, which is built
   * again for the current one. Oldest first; bounded by the bytes of the configurations held.
   */
  const known = new Map<string, Known>();
  let knownBytes = 0;
  const forget = (id: string) => {
    const entry = known.get(id);
    if (!entry) return;
    known.delete(id);
    knownBytes -= entry.bytes;
  };
  const remember = (id: string, kind: EndpointKind, redact: boolean, responseJson: string, version: string): Known => {
    forget(id);
    const entry = { kind, redact, response: JSON.parse(responseJson) as ResponseConfig, version, bytes: responseJson.length + id.length + 100 };
    known.set(id, entry);
    knownBytes += entry.bytes;
    for (const [oldest] of known) {
      if (knownBytes <= KNOWN_BYTES) break;
      forget(oldest);
    }
    return entry;
  };
  /** The endpoint as Redis has it now (and remembered), or undefined when it is gone. */
  const fetchEndpoint = async (id: string): Promise<{ record: Omit<EndpointRecord, 'response'>; seen: Known } | undefined> => {
    const found = (await run('GET', id, now())) as [string, string, string] | null;
    if (!found) {
      forget(id);
      return undefined;
    }
    const record = JSON.parse(found[0]) as Omit<EndpointRecord, 'response'>;
    return { record, seen: remember(id, record.kind, redactsSecrets(record), found[1], found[2]) };
  };
  /** What this instance knows of the endpoint, asking Redis only when it knows nothing. */
  const lookUp = async (id: string): Promise<Known | undefined> => known.get(id) ?? (await fetchEndpoint(id))?.seen;

  return {
    async createEndpoint(endpoint, { maxEndpoints, deadlineMs }) {
      const { response, ...rest } = endpoint;
      const created = await run('CREATE', endpoint.id, JSON.stringify(rest), JSON.stringify(response), endpoint.kind, deadlineMs, now(), maxEndpoints);
      return created === 1 ? 'created' : created === 2 ? 'taken' : 'full';
    },

    async extendEndpoint(id, deadlineMs) {
      const fetched = await fetchEndpoint(id);
      if (!fetched || fetched.record.kind !== 'kept') return undefined;
      const expiresAt = new Date(deadlineMs).toISOString();
      const record = { ...fetched.record, expiresAt };
      const extended = await run('EXTEND', id, now(), JSON.stringify(record), deadlineMs, extendedMessage(expiresAt));
      return extended === 1 ? { ...record, response: fetched.seen.response } : undefined;
    },

    async getEndpoint(id) {
      const fetched = await fetchEndpoint(id);
      return fetched && { ...fetched.record, response: fetched.seen.response };
    },

    async findEndpointKind(id) {
      return (await lookUp(id))?.kind;
    },

    async deleteEndpoint(id) {
      forget(id);
      return (await run('DELETE', id, now(), DELETED_MESSAGE)) === 1;
    },

    async countEndpoints() {
      return Number(await run('COUNT', now()));
    },

    async setResponse(id, response) {
      forget(id);
      return (await run('SET_RESPONSE', id, now(), JSON.stringify(response), responseChangedMessage(response))) === 1 ? 'set' : undefined;
    },

    async holdEndpoints(ids, holderId, leaseUntilMs, graceMs) {
      if (ids.length === 0) return [];
      return (await run('HOLD', now(), holderId, leaseUntilMs, graceMs, ...ids)) as string[];
    },

    async countWatchers(id, holderId, localCount) {
      const total = await run('COUNT_WATCHERS', id, now(), holderId, localCount);
      return total === null ? undefined : Number(total);
    },

    async releaseEndpoint(id, holderId, graceMs) {
      await run('RELEASE', id, now(), holderId, graceMs);
    },

    async sweepExpired() {
      let swept = 0;
      for (;;) {
        const batch = Number(await run('SWEEP', now(), SWEEP_BATCH));
        swept += batch;
        if (batch < SWEEP_BATCH) return swept;
      }
    },

    async appendRequest(id, kind, recordFor, capturedAtMs) {
      let seen = await lookUp(id);
      if (!seen) return undefined;
      const append = ({ response, redact }: Known, version: string) => {
        const draft = recordFor(response, redact);
        const choices = draft.choices.flatMap((choice, at) => [choice.rule, choice.times, draft.answers[at] as string]);
        return run('APPEND', id, now(), draft.json, capturedAtMs, ...limits, kind, version, ...choices) as Promise<[number, number, number] | [string, string] | null>;
      };
      let reply = await append(seen, seen.version);
      if (reply !== null && typeof reply[0] === 'string') {
        // The configuration changed since this instance saw it: build the draft again for the
        // current one. This try takes whatever is current, so a stream of changes cannot keep
        // a capture waiting.
        seen = remember(id, kind, seen.redact, reply[0], reply[1] as string);
        reply = await append(seen, '');
      }
      if (reply === null || typeof reply[0] === 'string') {
        forget(id);
        return undefined;
      }
      const [seq, choice, responder] = reply as [number, number, number];
      return { seq, response: seen.response, choice, responder: responder === 1 };
    },

    async setAnswer(id, seq, answerJson) {
      return (await run('SET_ANSWER', id, now(), seq, answerJson, answeredMessage(seq, answerJson))) === 1;
    },

    async setResponder(id, token, untilMs, action) {
      return (await run('SET_RESPONDER', id, now(), token, untilMs, action, responderMessage(token), responderMessage(null))) === 1;
    },

    async readLog(id, afterSeq) {
      const reply = (await run('READ_LOGBuffer', id, now(), afterSeq)) as Array<number | Buffer> | null;
      if (!reply) return undefined;
      const requests: StoredRequest[] = [];
      for (let i = 2; i + 2 < reply.length; i += 3) {
        const forwarded = reply[i + 2];
        const stored: StoredRequest = { seq: Number(reply[i]), message: reply[i + 1] as Buffer };
        if (Buffer.isBuffer(forwarded)) stored.forwarded = forwarded.toString();
        requests.push(stored);
      }
      return { lastSeq: Number(reply[0]), clearedSeq: Number(reply[1]), requests };
    },

    async setForwarded(id, seq, message) {
      return (await run('FORWARDED', id, now(), seq, message)) === 1;
    },

    async clearRequests(id) {
      const cleared = await run('CLEAR', id, now());
      return cleared === null ? undefined : Number(cleared);
    },

    async stats() {
      const [storedBytes, evictedRequests] = (await run('STATS')) as [number, number];
      return { storedBytes: Number(storedBytes), evictedRequests: Number(evictedRequests) };
    },
  };
}

interface Known {
  kind: EndpointKind;
  /** Whether its requests are stored with their secrets redacted (fixed at creation). */
  redact: boolean;
  response: ResponseConfig;
  version: string;
  /** Roughly what the entry holds in memory. */
  bytes: number;
}
