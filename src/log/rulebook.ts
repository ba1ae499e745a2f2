/**
 * The request log's rules, written once (issue 32): what a seq is, what a stored request costs,
 * what is trimmed when, what is announced, and when a resuming reader has missed something.
 * Every backend follows them: the memory and SQLite stores call these functions, and the Redis
 * scripts (src/redis/lua) do the same in Lua; test/contract/log-rules.cases.ts is one table
 * of cases every backend, the Lua included, is checked against.
 *
 * Pure: no I/O, no timers, no clock. A backend asks what to drop and does the dropping.
 *
 * Numbering: an endpoint's seqs start at 1 and only grow (`nextSeq`). A request deleted,
 * trimmed, evicted or cleared leaves its seq behind for good; clearing sets the endpoint's
 * `clearedSeq` to its `lastSeq`, and a delete moves neither counter.
 */
import type { ResponseConfig } from '../shared/schemas/response-config.js';

export { chooseAnswer } from '../shared/answer-rules.js';

/** What a stored request costs beyond its message bytes (objects, list slots), measured: docs/deploy.md#sizing. */
export const STORED_REQUEST_OVERHEAD_BYTES = 160;

/**
 * What a stored request counts against every byte budget, on every backend: its bytes (the
 * answer and the record, as one element holds them: store/stored-request.ts, `elementLength`),
 * its latest forward result (as UTF-8, which is at least what memory holds of it), and the
 * overhead. The Lua (src/redis/lua: append.lua, prelude.lua's forgetRequest, forwarded.lua)
 * counts the same.
 */
export function storedCost(elementBytes: number, forwarded: string | undefined): number {
  return elementBytes + (forwarded === undefined ? 0 : Buffer.byteLength(forwarded)) + STORED_REQUEST_OVERHEAD_BYTES;
}

/** What a response configuration costs beyond its JSON, held in memory (objects around it). */
const RESPONSE_CONFIG_OVERHEAD_BYTES = 1024;

/**
 * What a response configuration costs held in memory: its JSON, twice (a parsed string may be
 * held as two bytes a character), plus the objects around it. Measured in docs/deploy.md#sizing.
 */
export function responseConfigCost(response: ResponseConfig): number {
  return 2 * JSON.stringify(response).length + RESPONSE_CONFIG_OVERHEAD_BYTES;
}

/** The seq the endpoint's next request gets: one past the last ever given, whatever was deleted or cleared since. */
export const nextSeq = (lastSeq: number): number => lastSeq + 1;

/** A stored request as the rules see it. */
export interface HeldRequest {
  seq: number;
  /** `storedCost` of the request as it is now. */
  costBytes: number;
}

/** A stored request of some endpoint, in the store-wide age order. */
export interface HeldAnywhere extends HeldRequest {
  endpointId: string;
}

/** What an endpoint's stored requests add up to. */
export interface EndpointTally {
  count: number;
  bytes: number;
}

export interface EndpointLimits {
  requestsPerEndpoint: number;
  maxStoredBytesPerEndpoint: number;
}

/** The endpoint's oldest requests to drop, and what its watchers are told. */
export interface EndpointTrim<T extends HeldRequest> {
  /** Oldest first: the backend removes these, in this order. */
  dropped: T[];
  /** Of those, how many the byte budget took: counted as evicted (the count trim's are not). */
  evicted: number;
  /** Announced to the endpoint's watchers as `evicted`: the last seq the byte budget took; undefined when it took none. */
  evictedThroughSeq: number | undefined;
}

/**
 * After an endpoint grew (a capture, a forward result): past REQUESTS_PER_ENDPOINT its oldest
 * requests go unannounced (a watcher holds that many and lets the oldest go itself); then, past
 * the endpoint's byte budget, its oldest requests go, never its last one (so one large request
 * is still shown), announced as `evicted` through the last seq taken. `oldestFirst` is the
 * endpoint's stored requests, oldest first: read only when one must go, and only as far as needed
 * (a backend may hand a database cursor that opens when read).
 */
export function trimEndpoint<T extends HeldRequest>(
  oldestFirst: Iterable<T>,
  tally: EndpointTally,
  limits: EndpointLimits,
): EndpointTrim<T> {
  let { count, bytes } = tally;
  const trim: EndpointTrim<T> = { dropped: [], evicted: 0, evictedThroughSeq: undefined };
  const overCount = () => count > limits.requestsPerEndpoint;
  const overBytes = () => bytes > limits.maxStoredBytesPerEndpoint && count > 1;
  takeWhile(
    oldestFirst,
    () => overCount() || overBytes(),
    (held) => {
      // The count's trim comes first: a request it takes is not an eviction, whatever the bytes say.
      if (!overCount()) {
        trim.evicted++;
        trim.evictedThroughSeq = held.seq;
      }
      trim.dropped.push(held);
      count--;
      bytes -= held.costBytes;
    },
  );
  return trim;
}

/** The requests the store-wide budget takes, and what each endpoint's watchers are told. */
export interface StoreEviction<T extends HeldAnywhere> {
  /** Oldest first, across endpoints: the backend removes these, in this order. */
  dropped: T[];
  /** [endpoint id, the last seq taken from it], one per endpoint in the order it first lost one: each announced as `evicted`. */
  evictedThrough: Array<[string, number]>;
}

/**
 * Past the store's byte budget (MAX_STORED_BYTES; MAX_DISK_BYTES for SQLite; each Redis
 * partition's share) the oldest stored requests of any endpoint go first, an endpoint's last one
 * included: the budget protects the process, not an endpoint. Run after the endpoint's own trim.
 * `oldestFirst` is every stored request in the order they were stored, read as `trimEndpoint`
 * reads its own.
 */
export function evictAcrossEndpoints<T extends HeldAnywhere>(
  oldestFirst: Iterable<T>,
  totalBytes: number,
  maxStoredBytes: number,
): StoreEviction<T> {
  let bytes = totalBytes;
  const dropped: T[] = [];
  const through = new Map<string, number>();
  takeWhile(
    oldestFirst,
    () => bytes > maxStoredBytes,
    (held) => {
      dropped.push(held);
      through.set(held.endpointId, held.seq);
      bytes -= held.costBytes;
    },
  );
  return { dropped, evictedThrough: [...through] };
}

/** What a reader resuming after a seq needs to know of an endpoint's log. */
export interface LogCounters {
  /** The oldest stored request's seq after the reader's; undefined when none is stored after it. */
  firstSeq: number | undefined;
  lastSeq: number;
  clearedSeq: number;
}

/**
 * Whether a reader that holds everything through `afterSeq` has missed requests it will never
 * get (evicted, trimmed, deleted): the first one stored after it is not the next seq, or none is
 * stored and seqs were given past it. What a clear took is not a gap: the reader drops what it
 * holds through `clearedSeq`. A reader ahead of the endpoint (it saw writes the store lost, or
 * made the number up) has missed nothing it claimed to hold.
 */
export function hasGap(afterSeq: number, log: LogCounters): boolean {
  if (afterSeq > log.lastSeq) return false;
  const since = Math.max(afterSeq, log.clearedSeq);
  return log.firstSeq !== undefined ? log.firstSeq > since + 1 : log.lastSeq > since;
}

/** Takes items in order while `more()` holds: `items` is not opened when none is needed, and is closed (for...of returns it) once enough are. */
function takeWhile<T>(items: Iterable<T>, more: () => boolean, take: (item: T) => void): void {
  if (!more()) return;
  for (const item of items) {
    take(item);
    if (!more()) return;
  }
}
