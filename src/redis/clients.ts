import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type pino from 'pino';
import type { AppDeps } from '../app.js';
import { createRedisBus } from './bus.js';
import type { Config } from '../config.js';
import { createRedisStore } from './store.js';
import type { StoreLimits } from '../store/store.js';

/**
 * Two connections: one for commands (the store, the bus's publishes, the rate limits) and one
 * for subscriptions, to one Redis (REDIS_URL), to the primary the sentinels name
 * (REDIS_SENTINELS: after a failover both follow the new primary, and a demoted primary that
 * answers READONLY makes them reconnect), or to a Cluster (REDIS_CLUSTER_NODES: sharded
 * subscriptions on each shard). Commands fail at once while Redis is unreachable (no offline
 * queue) and after REDIS_COMMAND_TIMEOUT_MS when it is slow, so a request gets 503
 * STORE_UNAVAILABLE instead of waiting; the client keeps reconnecting in the background. The
 * process starts without Redis and reports not ready (/readyz) until it is there.
 */
export function onRedis(
  config: Config['redis'],
  limits: StoreLimits,
  log: pino.Logger,
  instanceId: string,
): { deps: AppDeps; close: () => Promise<void> } {
  const watch = (client: Redis | Cluster, role: string) => {
    let down = false;
    client.on('error', (error: Error) => {
      if (!down) log.error({ err: error, role }, 'redis connection error');
      down = true;
    });
    client.on('ready', () => {
      if (down) log.info({ role }, 'redis connection back');
      down = false;
    });
    return client;
  };
  const clientOptions = (role: string, offlineQueue: boolean): RedisOptions => ({
    commandTimeout: config.redisCommandTimeoutMs,
    enableOfflineQueue: offlineQueue,
    // Commands in flight at a cut are failed (failInFlight), not sent again on their own: the
    // store's callers decide what to try again, within their deadline. Subscriptions, which
    // ioredis restores itself, keep its default.
    autoResendUnfulfilledCommands: offlineQueue,
    maxRetriesPerRequest: 1,
    // Back off up to 2 s between attempts, forever: Redis coming back is the normal case.
    retryStrategy: (attempt) => Math.min(2000, attempt * 100),
    connectionName: `hookwatch-${role}`,
    // A primary demoted by a failover refuses writes: reconnect, and ask the sentinels again.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  });
  const connect = (role: string, offlineQueue: boolean): Redis | Cluster => {
    const options = clientOptions(role, offlineQueue);
    if (config.redisClusterNodes !== undefined) {
      return watch(
        new Cluster(config.redisClusterNodes, {
          redisOptions: options,
          enableOfflineQueue: offlineQueue,
          clusterRetryStrategy: (attempt) => Math.min(2000, attempt * 100),
          shardedSubscribers: role === 'subscriber',
        }),
        role,
      );
    }
    if (config.redisSentinels !== undefined) {
      // failoverDetector: moves to a new primary as soon as the sentinels name it, rather than
      // writing to the old one until it is demoted (writes a resync then drops).
      return watch(
        new Redis({
          ...options,
          sentinels: config.redisSentinels,
          name: config.redisSentinelName,
          failoverDetector: true,
          enableAutoPipelining: true,
        }),
        role,
      );
    }
    return watch(new Redis(config.redisUrl as string, { ...options, enableAutoPipelining: true }), role);
  };
  const commands = failInFlight(connect('commands', false));
  // Subscriptions wait for the connection (ioredis restores them after a reconnect anyway).
  const subscriber = connect('subscriber', true);
  const partitions = config.redisPartitions;
  const store = createRedisStore({
    ...limits,
    redis: commands,
    instanceId,
    prefix: config.redisPrefix,
    partitions,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    replicaWaitMs: config.redisSentinels === undefined ? 0 : config.redisReplicaWaitMs,
    onReplicationUnguarded: (found) =>
      log.warn(
        { minReplicasToWrite: found },
        'the Redis primary acknowledges writes no replica has (min-replicas-to-write is not at least 1): a failover can lose captures its senders were told were stored; see docs/deploy.md, Sentinel',
      ),
    onSettingsChanged: (before, now) =>
      log.warn(
        { before, now },
        "this instance's storage limits differ from those in Redis, set by another instance: this instance's now apply to every instance",
      ),
  });
  // The requests watchers get tell the store how far each partition has counted (lost writes).
  const bus = createRedisBus({
    publisher: commands,
    subscriber,
    prefix: config.redisPrefix,
    partitions,
    onAge: store.noteAge,
  });
  return {
    deps: { store, bus, rateLimitRedis: commands, instanceId },
    close: async () => {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    },
  };
}

/**
 * What a call fails with when its connection closed after it was written and before its reply:
 * Redis may or may not have run it. Not ioredis's own "Connection is closed." (a Cluster sends
 * a command failed with that again by itself).
 */
export const IN_FLIGHT_AT_CUT = 'connection cut with the command in flight: its outcome is unknown';

/** What ioredis fails a node's commands with when its connection ends for good (a Cluster then sends them again). */
const CONNECTION_CLOSED = 'Connection is closed.';

type CommandQueue = { shift(): { command: { reject(error: Error): void } } | undefined } | null | undefined;

/**
 * Fails every command in flight at a cut at once, as of unknown outcome (IN_FLIGHT_AT_CUT), so
 * nothing is sent again without its caller deciding:
 * - a connection that reconnects (one Redis, Sentinel) keeps them as `prevCommandQueue` until it
 *   is back, then resends or, with the resend off, drops them unsettled (its auto-pipeline would
 *   wait on those until the command timeout): its 'close' fails them;
 * - a Cluster's node connection does not reconnect: it fails them with "Connection is closed."
 *   at once, which the Cluster takes as a reason to send them again elsewhere; they are failed
 *   first, before that flush.
 * Commands never written (the offline queue) keep ioredis's handling: sending them is safe.
 */
export function failInFlight<T extends Redis | Cluster>(client: T): T {
  const failAll = (queue: CommandQueue) => {
    if (!queue) return;
    for (let item = queue.shift(); item !== undefined; item = queue.shift())
      item.command.reject(new Error(IN_FLIGHT_AT_CUT));
  };
  const onNode = (node: Redis) => {
    const internals = node as unknown as {
      prevCommandQueue?: CommandQueue;
      commandQueue: CommandQueue;
      flushQueue(error: Error, options?: unknown): void;
    };
    node.on('close', () => failAll(internals.prevCommandQueue));
    const flush = internals.flushQueue.bind(node);
    internals.flushQueue = (error, options) => {
      if (error.message === CONNECTION_CLOSED) failAll(internals.commandQueue);
      flush(error, options);
    };
  };
  if (client instanceof Cluster) client.on('+node', onNode);
  else onNode(client as Redis);
  return client;
}
