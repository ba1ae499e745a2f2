import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { nanoid } from 'nanoid';
import type { EndpointRecord, Store, StoreLimits } from '../store/store.js';
import { recordBuffer, storedRequestsOf } from '../store/stored-request.js';
import {
  MAX_LISTED_ENDPOINTS,
  redactsSecrets,
  STORED_REQUEST_OVERHEAD_BYTES,
  StoreUnavailableError,
} from '../store/store.js';
import {
  answeredMessage,
  DELETED_MESSAGE,
  extendedMessage,
  responderMessage,
  responseChangedMessage,
} from '../shared/server-messages.js';
import * as scripts from './scripts.js';
import { partitionPrefixes } from './partitions.js';
import { createReplicaWait } from './replicas.js';
import { connectionFailed, createRedisCalls, keysIn, type ScriptName } from './calls.js';
import { createEviction } from './eviction.js';
import { knownEndpoints, type Known } from './known-endpoints.js';
import { createSettling } from './settling.js';

export interface RedisStoreOptions extends StoreLimits {
  /** A connection main.ts owns (opened, closed and given an 'error' listener there): one Redis, a Sentinel-managed one, or a Cluster. */
  redis: Redis | Cluster;
  /** This process among the instances (main.ts): its captures' idempotency keys carry it. Tests: made up when absent. */
  instanceId?: string;
  /** Every key and channel starts with it (`hookwatch:v4:`). */
  prefix: string;
  /** Partitions of the keyspace (redis/partitions.ts): 1 on one Redis; on a Cluster, enough to spread over its shards. */
  partitions?: number;
  /** Past it a call is answered StoreUnavailableError, whether or not Redis answers later (REDIS_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs: number;
  /** Told when this instance's limits differ from those Redis had (another instance's): this instance's now apply to all. */
  onSettingsChanged?: (before: Record<string, string>, now: Record<string, string>) => void;
  /**
   * With replicas (Sentinel): how long a capture waits for one to acknowledge it (`WAIT`)
   * before its sender is answered; 0: no wait. Past it the sender is answered all the same (the
   * request is stored, on the primary alone until a replica catches up) and
   * `unreplicatedCaptures` counts it.
   */
  replicaWaitMs?: number;
  /**
   * With a replica wait: told at start when the primary accepts writes no replica has
   * (`min-replicas-to-write` 0, or unreadable): a failover can then lose acknowledged captures.
   */
  onReplicationUnguarded?: (minReplicasToWrite: string) => void;
  /** Tests only: a clock to judge deadlines by, instead of Redis's own. */
  now?: () => number;
}

/** How long a creator's list outlives its newest endpoint's creation at least (its live endpoints' deadlines move). */
const CREATOR_KEEP_MS = 24 * 60 * 60 * 1000;
/** Endpoints swept per script run, so one sweep never blocks Redis for long. */
const SWEEP_BATCH = 200;
/** How often the instance measures how far Redis's clock is from its own (for APPEND's deadline), and counts the primary's replicas. */
const CLOCK_CHECK_MS = 5_000;
/** What a record says of its sender's answer when the sender was told 503 because Redis did not answer in time. */
const UNAVAILABLE_ANSWER = '{"status":503,"delayMs":0,"by":"error"}';

/** The Redis store, and what the bus tells it: the partition ages its watchers' requests carried. */
export interface RedisStore extends Store {
  /** A request of partition `partition` (its prefix) carried age `age` (lua/append.lua): Redis has given at least that many. */
  noteAge(partition: string, age: number): void;
}

/**
 * Endpoints, requests and lifetimes in Redis, shared by every instance: each operation is one
 * script (redis/scripts.ts), atomic and one round trip, on the one hash slot of the endpoint's
 * partition. Requests are announced on sharded channels by the script that stores them. Any
 * Redis failure (down, out of memory, or slower than REDIS_COMMAND_TIMEOUT_MS) surfaces as
 * StoreUnavailableError, and a capture its sender was told failed is never stored (APPEND's
 * deadline) nor stored twice (APPEND recognises a capture sent again).
 */
/** `{"type":"responder","id":"` : a `responder` message up to its token. */
const RESPONDER_MESSAGE_HEAD = responderMessage('').slice(0, -2);

export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const { redis, prefix, commandTimeoutMs } = options;
  /** Each partition's prefix, hash tag included (every key of it shares one slot), and an endpoint's. */
  const { all: partitions, of: partitionOf } = partitionPrefixes(prefix, options.partitions ?? 1);
  const localNow = options.now ?? Date.now;
  /** Redis's clock judges deadlines (scripts read TIME); a test's clock, when one is given. */
  const scriptNow = () => (options.now ? options.now() : '');
  const calls = createRedisCalls(redis, commandTimeoutMs);
  const { bounded } = calls;
  /** This process, for recognising its own captures sent twice. */
  const instance = options.instanceId ?? nanoid(10);
  let captures = 0;
  /**
   * Runs a script on a partition, every key it touches declared (the partition's, each of `ids`'
   * and, for a capture, this instance's idempotency set): a stalled Redis answers the caller 503
   * (redis/calls.ts), and APPEND's own deadline keeps such a capture from being stored when the
   * script runs late.
   */
  const keysByPartition = new Map(partitions.map((partition) => [partition, keysIn(partition, instance)]));
  const runOnce = (
    name: ScriptName,
    partition: string,
    ids: readonly string[],
    ...args: Array<string | number | Buffer>
  ): Promise<unknown> => {
    const keys = (keysByPartition.get(partition) as ReturnType<typeof keysIn>)(
      ids,
      name === 'APPEND' || name === 'SETTLE',
    );
    return calls.script(name, keys, [partition, scriptNow(), ...args]);
  };
  /** Runs a script; when its partition had no settings (Redis restarted empty), writes them again and runs it once more. */
  const run = async (
    name: ScriptName,
    partition: string,
    ids: readonly string[],
    ...args: Array<string | number | Buffer>
  ): Promise<unknown> => {
    try {
      return await runOnce(name, partition, ids, ...args);
    } catch (error) {
      if (!String((error as Error).cause ?? '').includes(scripts.NO_SETTINGS)) throw error;
      configured = undefined;
      await configure();
      return runOnce(name, partition, ids, ...args);
    }
  };
  const onEndpoint = (name: ScriptName, id: string, ...args: Array<string | number | Buffer>) =>
    run(name, partitionOf(id), [id], id, ...args);
  /**
   * A creator's endpoint ids, newest last by creation time: a sorted set of its own, outside the
   * partitions (its endpoints are spread over them). It only points: listing reads each endpoint
   * and drops the ids of those gone, so it is never the authority on what lives.
   */
  const creatorKey = (creator: string) =>
    `${prefix}creator:${createHash('sha256').update(creator).digest('hex').slice(0, 32)}`;
  const onEveryPartition = (name: ScriptName, ...args: Array<string | number | Buffer>) =>
    Promise.all(partitions.map((partition) => run(name, partition, [], ...args)));

  /** Redis's clock minus this instance's, as last measured (half a round trip of error). */
  let clockOffsetMs = 0;
  const replicas = createReplicaWait(redis as Redis, options.replicaWaitMs ?? 0, options.onReplicationUnguarded);
  /** Measures how far Redis's clock is from this instance's, and (with a replica wait) counts the primary's replicas. */
  const measureRedis = async () => {
    const before = localNow();
    const [seconds, micros] = (await (redis as Redis).time()) as [string | number, string | number];
    const after = localNow();
    clockOffsetMs = options.now ? 0 : Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - (before + after) / 2;
    await replicas.count();
  };

  // The budgets live in Redis, one set for every instance (the latest started wins, and says so).
  const settings = {
    count: String(options.requestsPerEndpoint),
    perEp: String(options.maxStoredBytesPerEndpoint),
    total: String(Math.floor(options.maxStoredBytes / partitions.length)),
    overhead: String(STORED_REQUEST_OVERHEAD_BYTES),
  };
  let configured: Promise<void> | undefined;
  const configure = () => {
    configured ??= (async () => {
      const before = await onEveryPartition('CONFIGURE', ...Object.entries(settings).flat());
      const previous = Object.fromEntries(
        chunk((before[0] as string[] | undefined) ?? [], 2) as Array<[string, string]>,
      );
      if (
        Object.keys(previous).length > 0 &&
        Object.entries(settings).some(([name, value]) => previous[name] !== value)
      )
        options.onSettingsChanged?.(previous, settings);
      await measureRedis().catch(() => undefined);
      await replicas.checkGuard();
    })().catch((error: unknown) => {
      configured = undefined;
      throw error;
    });
    return configured;
  };
  const clockCheck = setInterval(() => void measureRedis().catch(() => undefined), CLOCK_CHECK_MS);
  clockCheck.unref();

  /**
   * The highest age this instance has seen in each partition: from its own captures and from
   * the requests its watchers got. Redis behind it has lost writes (lua/prelude.lua, lostWrites).
   */
  const knownAges = new Map<string, number>();
  const noteAge = (partition: string, age: number) => {
    if (age > (knownAges.get(partition) ?? 0)) knownAges.set(partition, age);
  };
  // Back after a reconnect (a restart, a failover): tell Redis at once what was seen before,
  // so the first capture after it, through any instance, numbers past what was handed out.
  let wasReady = redis.status === 'ready';
  redis.on('ready', () => {
    if (!wasReady) {
      wasReady = true;
      return;
    }
    for (const [partition, age] of knownAges) void run('CHECK_AGES', partition, [], age).catch(() => undefined);
    // And the limits written again: Redis may be another (a failover) or have restarted empty.
    configured = undefined;
    void configure().catch(() => undefined);
  });

  const { known, forget, remember } = knownEndpoints();
  /** The endpoint as Redis has it now (and remembered), or undefined when it is gone. */
  const fetchEndpoint = async (
    id: string,
  ): Promise<{ record: Omit<EndpointRecord, 'response'>; seen: Known; responder: string | undefined } | undefined> => {
    const found = (await onEndpoint('GET', id)) as [string, string, string, string | null, number] | null;
    if (!found) {
      forget(id);
      return undefined;
    }
    const record = JSON.parse(found[0]) as Omit<EndpointRecord, 'response'>;
    const seen = remember(id, record.kind, redactsSecrets(record), found[1], found[2], known.get(id)?.lastSeq);
    return { record, seen, responder: found[3] ?? undefined };
  };
  /** What this instance knows of the endpoint, asking Redis only when it knows nothing. */
  const lookUp = async (id: string): Promise<Known | undefined> => known.get(id) ?? (await fetchEndpoint(id))?.seen;

  /**
   * Runs APPEND. When Redis is out of memory, frees a batch of the oldest requests and tries
   * once more. When the connection failed under it, tries again (the same capture number: a
   * capture that did run is recognised, never stored twice) while `retryUntil` allows; one that
   * timed out (Redis may be stalled, not gone) or that Redis refused is not tried again.
   */
  const append = async (args: Array<string | number | Buffer>, id: string, retryUntil: number): Promise<unknown> => {
    for (;;) {
      try {
        return await onEndpoint('APPEND', id, ...args);
      } catch (error) {
        const cause = String((error as Error).cause ?? error);
        if (/OOM/.test(cause)) {
          // Room is made only when stored requests are what fills Redis: evicting them for memory
          // something else holds would empty the log and still not make room.
          if (!(await requestsFillRedis())) throw error;
          await evict(partitionOf(id), true);
          return onEndpoint('APPEND', id, ...args);
        }
        if (!connectionFailed(error) || localNow() >= retryUntil) throw error;
        await ready(retryUntil - localNow());
      }
    }
  };
  const { evict, evictSoon, requestsFillRedis } = createEviction({
    redis,
    bounded,
    run,
    storedBytes: async () => (await store.stats()).storedBytes,
  });
  /** Resolves when the connection is ready again, or after `withinMs`. One listener, however many captures wait. */
  let backAgain: Promise<void> | undefined;
  const ready = async (withinMs: number) => {
    if (redis.status === 'ready') return new Promise<void>((resolve) => setTimeout(resolve, 10));
    backAgain ??= new Promise<void>((resolve) =>
      redis.once('ready', () => {
        backAgain = undefined;
        resolve();
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      backAgain,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, withinMs)))),
    ]);
    clearTimeout(timer);
  };

  const { unknownOutcome } = createSettling({
    settle: (id, captureNo) => run('SETTLE', partitionOf(id), [], instance, captureNo).then(Number),
    markFailed: (id, seq) =>
      onEndpoint('SET_ANSWER', id, seq, UNAVAILABLE_ANSWER, answeredMessage(seq, UNAVAILABLE_ANSWER)),
    now: localNow,
  });

  const store: RedisStore = {
    noteAge,

    async createEndpoint(endpoint, { maxEndpoints, deadlineMs }) {
      await configure();
      const { response, ...rest } = endpoint;
      // Each partition holds its share of the cap (docs/deploy.md: Redis Cluster).
      const cap = Math.max(1, Math.ceil(maxEndpoints / partitions.length));
      const created = await onEndpoint(
        'CREATE',
        endpoint.id,
        JSON.stringify(rest),
        JSON.stringify(response),
        endpoint.kind,
        Math.max(0, deadlineMs - localNow()),
        cap,
      );
      if (created === 1 && endpoint.creator !== undefined) {
        const key = creatorKey(endpoint.creator);
        // Kept as long as the creator's longest-lived endpoint might be, and never more than the newest ids.
        const keepMs = Math.max(deadlineMs - localNow(), CREATOR_KEEP_MS);
        await bounded(
          redis
            .multi()
            .zadd(key, localNow(), endpoint.id)
            .zremrangebyrank(key, 0, -(MAX_LISTED_ENDPOINTS * 2 + 1))
            .pexpire(key, keepMs, 'NX')
            .pexpire(key, keepMs, 'GT')
            .exec(),
        );
      }
      return created === 1 ? 'created' : created === 2 ? 'taken' : 'full';
    },

    async extendEndpoint(id, deadlineMs) {
      const fetched = await fetchEndpoint(id);
      if (!fetched || fetched.record.kind !== 'kept') return undefined;
      const expiresAt = new Date(deadlineMs).toISOString();
      const record = { ...fetched.record, expiresAt };
      const extended = await onEndpoint(
        'EXTEND',
        id,
        JSON.stringify(record),
        Math.max(0, deadlineMs - localNow()),
        extendedMessage(expiresAt),
      );
      return Number(extended) > 0 ? { ...record, response: fetched.seen.response } : undefined;
    },

    async getEndpoint(id) {
      const fetched = await fetchEndpoint(id);
      if (!fetched) return undefined;
      const endpoint: EndpointRecord = { ...fetched.record, response: fetched.seen.response };
      if (fetched.responder !== undefined) endpoint.responder = fetched.responder;
      return endpoint;
    },

    async findEndpointKind(id) {
      return (await lookUp(id))?.kind;
    },

    async deleteEndpoint(id) {
      forget(id);
      return (await onEndpoint('DELETE', id, DELETED_MESSAGE)) === 1;
    },

    async countEndpoints() {
      return (await onEveryPartition('COUNT')).reduce((sum: number, count) => sum + Number(count), 0);
    },

    async listEndpoints(creator) {
      const key = creatorKey(creator);
      const ids = await bounded(redis.zrange(key, String(-MAX_LISTED_ENDPOINTS), '-1'));
      const found = await Promise.all(ids.map(async (id) => [id, await this.getEndpoint(id)] as const));
      const gone = found.filter(([, endpoint]) => endpoint === undefined).map(([id]) => id);
      if (gone.length > 0) await bounded(redis.zrem(key, ...gone));
      return found.flatMap(([, endpoint]) => (endpoint === undefined ? [] : [endpoint]));
    },

    async setResponse(id, response) {
      forget(id);
      return (await onEndpoint('SET_RESPONSE', id, JSON.stringify(response), responseChangedMessage(response))) === 1
        ? 'set'
        : undefined;
    },

    async holdEndpoints(ids, holderId, leaseUntilMs, graceMs) {
      const leaseMs = Math.max(0, leaseUntilMs - localNow());
      // One script per partition: the heartbeat, then a cheap check of each endpoint it holds.
      const byPartition = new Map<string, string[]>();
      for (const id of ids) byPartition.set(partitionOf(id), [...(byPartition.get(partitionOf(id)) ?? []), id]);
      if (ids.length === 0) for (const partition of partitions) byPartition.set(partition, []);
      const gone = await Promise.all(
        [...byPartition].map(
          ([partition, held]) => run('HOLD', partition, held, holderId, leaseMs, graceMs, ...held) as Promise<string[]>,
        ),
      );
      return gone.flat();
    },

    async countWatchers(id, holderId, localCount) {
      const total = await onEndpoint('COUNT_WATCHERS', id, holderId, localCount);
      return total === null ? undefined : Number(total);
    },

    async releaseEndpoint(id, holderId, graceMs) {
      await onEndpoint('RELEASE', id, holderId, graceMs);
    },

    async sweepExpired() {
      let swept = 0;
      for (const partition of partitions) {
        for (;;) {
          // Read first, then removed with every key of theirs declared (the script checks each again).
          const due = await bounded(
            redis.zrangebyscore(
              `${partition}index`,
              '-inf',
              Math.floor(localNow() + clockOffsetMs),
              'LIMIT',
              0,
              SWEEP_BATCH,
            ),
          );
          if (due.length > 0) swept += Number(await run('SWEEP', partition, due, ...due));
          if (due.length < SWEEP_BATCH) break;
        }
      }
      return swept;
    },

    async appendRequest(id, kind, recordFor, capturedAtMs, giveUpAtMs) {
      await configure();
      let seen = await lookUp(id);
      if (!seen) return undefined;
      const captureNo = ++captures;
      // Redis refuses to store it once the caller would have answered 503 (a quarter of the
      // time left is kept for the answer to travel back): the capture's own deadline when it
      // has one, which its earlier calls (rate limits, the endpoint check) have used part of.
      const leftMs = Math.min(
        commandTimeoutMs,
        giveUpAtMs === undefined ? commandTimeoutMs : Math.max(0, giveUpAtMs - localNow()),
      );
      const validUntil = Math.floor(localNow() + clockOffsetMs + leftMs * 0.75);
      // Tried again after a failed connection only while the answer can still reach the sender in time.
      const retryUntil = localNow() + leftMs * 0.75;
      const attempt = ({ response, redact, lastSeq }: Known, version: string) => {
        const entry = recordFor(response, redact);
        const choices = entry.choices.flatMap((choice, at) => [choice.rule, choice.times, entry.answers[at] as string]);
        return append(
          [
            recordBuffer(entry.record),
            capturedAtMs,
            kind,
            version,
            instance,
            captureNo,
            validUntil,
            lastSeq,
            knownAges.get(partitionOf(id)) ?? 0,
            ...choices,
          ],
          id,
          retryUntil,
        ) as Promise<AppendReply>;
      };
      let reply: AppendReply;
      try {
        reply = await attempt(seen, seen.version);
        if (Array.isArray(reply) && typeof reply[0] === 'string') {
          // The configuration changed since this instance saw it: build the entry again for the
          // current one. This try takes whatever is current, so a stream of changes cannot keep
          // a capture waiting.
          seen = remember(id, kind, seen.redact, reply[0], reply[1] as string, seen.lastSeq);
          reply = await attempt(seen, '');
        }
      } catch (error) {
        // Its sender is told 503: settled once Redis answers, so the record never says otherwise.
        unknownOutcome(id, captureNo);
        throw error;
      }
      if (reply === 'late')
        throw new StoreUnavailableError(new Error('Redis ran the capture after its caller gave up: not stored'));
      if (reply === null || typeof reply[0] === 'string') {
        forget(id);
        return undefined;
      }
      const [seq, choice, responder, age, over] = reply as [number, number, number, number, number];
      if (Number(over) === 1) evictSoon(partitionOf(id));
      seen.lastSeq = Math.max(seen.lastSeq, Number(seq));
      noteAge(partitionOf(id), Number(age));
      await replicas.replicated();
      return { seq: Number(seq), response: seen.response, choice: Number(choice), responder: Number(responder) === 1 };
    },

    async readLog(id, afterSeq) {
      const reply = (await onEndpoint('READ_LOGBuffer', id, afterSeq)) as Array<number | Buffer> | null;
      if (!reply) return undefined;
      const rows: Array<[number, Buffer, string | undefined]> = [];
      for (let i = 2; i + 2 < reply.length; i += 3) {
        const forwarded = reply[i + 2];
        rows.push([
          Number(reply[i]),
          reply[i + 1] as Buffer,
          Buffer.isBuffer(forwarded) ? forwarded.toString() : undefined,
        ]);
      }
      const requests = storedRequestsOf(rows);
      return { lastSeq: Number(reply[0]), clearedSeq: Number(reply[1]), requests };
    },

    async setForwarded(id, seq, message) {
      const kept = Number(await onEndpoint('FORWARDED', id, seq, message));
      if (kept === 2) evictSoon(partitionOf(id));
      return kept > 0;
    },

    async setAnswer(id, seq, answerJson) {
      return (await onEndpoint('SET_ANSWER', id, seq, answerJson, answeredMessage(seq, answerJson))) === 1;
    },

    async setResponder(id, token, untilMs, action) {
      // The script announces whichever claim holds after the change: it ends this head with the holder's token.
      return (
        (await onEndpoint(
          'SET_RESPONDER',
          id,
          token,
          Math.max(0, untilMs - localNow()),
          action,
          RESPONDER_MESSAGE_HEAD,
          responderMessage(null),
        )) === 1
      );
    },

    async deleteRequest(id, seq) {
      const removed = await onEndpoint('DELETE_REQUEST', id, seq);
      return removed === null ? undefined : removed === 1;
    },

    async clearRequests(id) {
      const cleared = await onEndpoint('CLEAR', id);
      return cleared === null ? undefined : Number(cleared);
    },

    async stats() {
      const all = (await onEveryPartition('STATS')) as Array<[number, number, number]>;
      return {
        storedBytes: all.reduce((sum, [bytes]) => sum + Number(bytes), 0),
        evictedRequests: all.reduce((sum, [, evicted]) => sum + Number(evicted), 0),
        unreplicatedCaptures: replicas.unreplicated,
      };
    },
  };
  return store;
}

type AppendReply = [number, number, number, number, number] | [string, string] | 'late' | null;

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}
