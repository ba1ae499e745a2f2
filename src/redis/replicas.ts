import type { Redis } from 'ioredis';

/** After a WAIT no replica answered, how long captures do not wait for one. */
const REPLICA_QUIET_MS = 5_000;

export interface ReplicaWait {
  /** Counts the primary's replicas again (the store does it every few seconds). */
  count(): Promise<void>;
  /** Resolves once a replica has every write sent so far on the connection, or the wait gave up (counted). */
  replicated(): Promise<void>;
  /** Once, at start: tells `onUnguarded` when the primary acknowledges writes no replica has. */
  checkGuard(): Promise<void>;
  /** Captures answered before a replica acknowledged them. */
  readonly unreplicated: number;
}

/**
 * With replicas (Sentinel), a capture is answered only once a replica has it: acknowledged by the
 * primary alone, it could be lost in a failover. `waitMs` 0: no wait (one Redis, a Cluster).
 *
 * One WAIT covers every write sent before it on the connection, and WAIT holds the connection
 * while it waits: captures that arrive while one is out share the next, so at most one waits
 * behind another. When no replica has it in time (none is in sync: just after a failover,
 * before the old primary rejoins as a replica) the sender is answered all the same, since the
 * request is stored and delivered (answering 503 would have it sent, stored and delivered
 * again), and it is counted; captures then do not wait for REPLICA_QUIET_MS (counted instead),
 * so a replica that is connected but not keeping up cannot hold the connection a second per
 * capture, and the replicas are counted again at once.
 */
export function createReplicaWait(
  redis: Redis,
  waitMs: number,
  onUnguarded?: (minReplicasToWrite: string) => void,
): ReplicaWait {
  let replicas = 0;
  let unreplicated = 0;
  let waiting: Promise<number> | undefined;
  let next: Promise<number> | undefined;
  let quietUntil = 0;
  let guardChecked = false;

  const count = async () => {
    if (waitMs > 0) replicas = Number(/connected_slaves:(\d+)/.exec(await redis.info('replication'))?.[1] ?? 0);
  };
  const waitForReplica = (): Promise<number> => {
    if (!waiting) {
      waiting = redis
        .wait(1, waitMs)
        .then(Number, () => 0)
        .finally(() => (waiting = undefined));
      return waiting;
    }
    // Sent after the one out, so it covers this capture too.
    next ??= waiting.then(() => {
      next = undefined;
      return waitForReplica();
    });
    return next;
  };

  return {
    count,
    async replicated() {
      if (waitMs === 0 || replicas === 0 || Date.now() < quietUntil) {
        if (waitMs > 0 && replicas > 0) unreplicated++;
        return;
      }
      if ((await waitForReplica()) >= 1) return;
      unreplicated++;
      quietUntil = Date.now() + REPLICA_QUIET_MS;
      void count().catch(() => undefined);
    },
    async checkGuard() {
      if (waitMs === 0 || guardChecked) return;
      guardChecked = true;
      const found = await redis.config('GET', 'min-replicas-to-write').then(
        (pair) => String((pair as string[])[1] ?? 'unknown'),
        () => 'unreadable',
      );
      if (!(Number(found) >= 1)) onUnguarded?.(found);
    },
    get unreplicated() {
      return unreplicated;
    },
  };
}
