import type { Bus } from '../bus/bus.js';
import { evictedMessage } from '../shared/protocol.js';
import {
  answeredMessage,
  clearedMessage,
  DELETED_MESSAGE,
  extendedMessage,
  removedMessage,
  responseChangedMessage,
  watchersMessage,
} from '../shared/server-messages.js';
import { createResponderClaims } from './responder-claims.js';
import {
  chooseAnswer,
  evictAcrossEndpoints,
  nextSeq,
  responseConfigCost,
  storedCost,
  trimEndpoint,
} from '../log/rulebook.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';
import {
  MAX_LISTED_ENDPOINTS,
  redactsSecrets,
  type EndpointRecord,
  type Store,
  type StoreLimits,
  type StoredRequest,
} from '../store/store.js';
import { elementLength } from '../store/stored-request.js';

interface Entry {
  endpoint: EndpointRecord;
  deadlineMs: number;
  /** Live endpoints: instance id -> end of its lease. */
  leases: Map<string, number>;
  /** Instance id -> sockets watching on it. */
  watchers: Map<string, number>;
  lastSeq: number;
  clearedSeq: number;
  /** Oldest first; at most `requestsPerEndpoint` long. */
  requests: Held[];
  bytes: number;
  /** What its own response configuration costs (0 for the shared default). */
  responseBytes: number;
  /** Answers each rule has given since the configuration was set (answer-rules.ts). */
  ruleCounts: Record<number, number>;
}

/**
 * A stored request, also linked into the store-wide age order (oldest first, across endpoints)
 * for eviction. A request leaves that order the moment it leaves its endpoint (trim, clear,
 * delete, sweep), so nothing the store no longer holds stays reachable from it.
 */
interface Held extends StoredRequest {
  entry: Entry;
  forwarded?: string;
  older: Held | undefined;
  newer: Held | undefined;
}

export interface MemoryStoreOptions extends StoreLimits {
  /** Where request and eviction messages are announced. */
  bus: Bus;
  /** The clock deadlines are judged by (tests inject one). */
  now?: () => number;
}

const costOf = (request: StoredRequest) => storedCost(elementLength(request.answer, request.record), request.forwarded);

/** Live endpoints (and, with DATA_DIR=none, kept ones): everything in this process's memory, gone on restart. */
export function createMemoryStore(options: MemoryStoreOptions): Store {
  const now = options.now ?? Date.now;
  const all = new Map<string, Entry>();
  const responders = createResponderClaims(now);
  /** The entry while it lives; past its deadline it is gone for every method (the sweep frees it). */
  const alive = (id: string): Entry | undefined => {
    const entry = all.get(id);
    return entry && entry.deadlineMs > now() ? entry : undefined;
  };
  // Ends of the store-wide age order: O(1) to add, to remove from anywhere, and to find the oldest.
  let oldest: Held | undefined;
  let newest: Held | undefined;
  let totalBytes = 0;
  let evictedRequests = 0;
  let responseBytes = 0;

  function link(held: Held): void {
    held.older = newest;
    if (newest) newest.newer = held;
    else oldest = held;
    newest = held;
  }

  function unlink(held: Held): void {
    if (held.older) held.older.newer = held.newer;
    else oldest = held.newer;
    if (held.newer) held.newer.older = held.older;
    else newest = held.older;
    held.older = undefined;
    held.newer = undefined;
    totalBytes -= costOf(held);
  }

  function dropOldest(entry: Entry): Held {
    const held = entry.requests.shift() as Held;
    entry.bytes -= costOf(held);
    unlink(held);
    return held;
  }

  /** The endpoint's stored requests, oldest first, as the rulebook reads them (only as far as it needs). */
  function* heldOf(entry: Entry) {
    for (const held of entry.requests) yield { seq: held.seq, costBytes: costOf(held), held };
  }

  /** Every stored request in the store-wide age order, oldest first. */
  function* heldAnywhere() {
    for (let held = oldest; held; held = held.newer)
      yield { endpointId: held.entry.endpoint.id, seq: held.seq, costBytes: costOf(held), held };
  }

  /**
   * After the endpoint grew (a capture, a forward result): the rulebook's trims, the endpoint's
   * own and then the store-wide one, each announced as it decides.
   */
  function keepBudgets(entry: Entry): void {
    const trim = trimEndpoint(heldOf(entry), { count: entry.requests.length, bytes: entry.bytes }, options);
    for (const { held } of trim.dropped) dropOldest(held.entry);
    if (trim.evictedThroughSeq !== undefined)
      void options.bus.publish(entry.endpoint.id, { data: evictedMessage(trim.evictedThroughSeq) });
    const eviction = evictAcrossEndpoints(heldAnywhere(), totalBytes, options.maxStoredBytes);
    // Oldest first across endpoints: each is its endpoint's oldest when its turn comes.
    for (const { held } of eviction.dropped) dropOldest(held.entry);
    for (const [id, throughSeq] of eviction.evictedThrough)
      void options.bus.publish(id, { data: evictedMessage(throughSeq) });
    evictedRequests += trim.evicted + eviction.dropped.length;
  }

  function removeAll(entry: Entry): void {
    for (const held of entry.requests) unlink(held);
    entry.bytes = 0;
    entry.requests = [];
  }

  function remove(id: string, entry: Entry): void {
    removeAll(entry);
    responseBytes -= entry.responseBytes;
    entry.responseBytes = 0;
    responders.forget(id);
    all.delete(id);
  }

  function countAlive(kind?: EndpointRecord['kind']): number {
    let count = 0;
    const at = now();
    for (const entry of all.values())
      if (entry.deadlineMs > at && (kind === undefined || entry.endpoint.kind === kind)) count++;
    return count;
  }

  return {
    async createEndpoint(endpoint, { maxEndpoints, deadlineMs }) {
      const taken = all.get(endpoint.id);
      if (taken && alive(endpoint.id)) return 'taken';
      // The map may still hold expired entries the sweep has not reached: count the living.
      if (all.size >= maxEndpoints && countAlive(endpoint.kind) >= maxEndpoints) return 'full';
      if (taken) remove(endpoint.id, taken);
      all.set(endpoint.id, {
        endpoint: { ...endpoint },
        deadlineMs,
        leases: new Map(),
        watchers: new Map(),
        lastSeq: 0,
        clearedSeq: 0,
        requests: [],
        bytes: 0,
        responseBytes: 0,
        ruleCounts: {},
      });
      return 'created';
    },

    async extendEndpoint(id, deadlineMs) {
      const entry = alive(id);
      if (!entry || entry.endpoint.kind !== 'kept') return undefined;
      entry.deadlineMs = deadlineMs;
      entry.endpoint.expiresAt = new Date(deadlineMs).toISOString();
      await options.bus.publish(id, { data: extendedMessage(entry.endpoint.expiresAt) });
      return { ...entry.endpoint };
    },

    async getEndpoint(id) {
      const entry = alive(id);
      if (!entry) return undefined;
      const responder = responders.holder(id);
      return responder === undefined ? { ...entry.endpoint } : { ...entry.endpoint, responder };
    },

    async findEndpointKind(id) {
      return alive(id)?.endpoint.kind;
    },

    async deleteEndpoint(id) {
      const entry = all.get(id);
      if (!entry) return false;
      remove(id, entry);
      if (entry.deadlineMs <= now()) return false;
      await options.bus.publish(id, { data: DELETED_MESSAGE, ends: true });
      return true;
    },

    async countEndpoints() {
      return countAlive();
    },

    async listEndpoints(creator) {
      // A scan: the map holds at most MAX_ENDPOINTS + MAX_KEPT_ENDPOINTS, and listing is rare.
      const at = now();
      const own = [...all.values()]
        .filter((entry) => entry.deadlineMs > at && entry.endpoint.creator === creator)
        .map((entry) => ({ ...entry.endpoint }));
      return own.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).slice(-MAX_LISTED_ENDPOINTS);
    },

    async holdEndpoints(ids, holderId, leaseUntilMs, graceMs) {
      const gone: string[] = [];
      for (const id of ids) {
        const entry = alive(id);
        if (!entry) {
          gone.push(id);
          continue;
        }
        if (entry.endpoint.kind !== 'live') continue;
        entry.leases.set(holderId, leaseUntilMs);
        entry.deadlineMs = Math.max(entry.deadlineMs, leaseUntilMs + graceMs);
      }
      return gone;
    },

    async countWatchers(id, holderId, localCount) {
      const entry = alive(id);
      if (!entry) return undefined;
      if (localCount > 0) entry.watchers.set(holderId, localCount);
      else entry.watchers.delete(holderId);
      const at = now();
      let total = 0;
      for (const [holder, count] of entry.watchers) {
        if (holder === holderId || (entry.leases.get(holder) ?? 0) > at) total += count;
      }
      await options.bus.publish(id, { data: watchersMessage(total) });
      return total;
    },

    async releaseEndpoint(id, holderId, graceMs) {
      const entry = alive(id);
      if (!entry || entry.endpoint.kind !== 'live') return;
      entry.leases.delete(holderId);
      const at = now();
      let lastLease = at;
      for (const [holder, until] of entry.leases) {
        if (until <= at) entry.leases.delete(holder);
        else lastLease = Math.max(lastLease, until);
      }
      entry.deadlineMs = lastLease + graceMs;
    },

    async sweepExpired() {
      const at = now();
      let swept = 0;
      for (const [id, entry] of all) {
        if (entry.deadlineMs > at) continue;
        remove(id, entry);
        swept++;
      }
      return swept;
    },

    async setResponse(id, response: ResponseConfig) {
      const entry = alive(id);
      if (!entry) return undefined;
      const cost = responseConfigCost(response);
      if (responseBytes - entry.responseBytes + cost > options.maxResponseConfigBytes) return 'full';
      responseBytes += cost - entry.responseBytes;
      entry.responseBytes = cost;
      entry.endpoint.response = response;
      entry.ruleCounts = {};
      await options.bus.publish(id, { data: responseChangedMessage(response) });
      return 'set';
    },

    async appendRequest(id, kind, recordFor, capturedAtMs) {
      const entry = alive(id);
      if (!entry || entry.endpoint.kind !== kind) return undefined;
      const { response } = entry.endpoint;
      // Built before the seq is taken: a record that throws leaves no hole in the numbering.
      const newEntry = recordFor(response, redactsSecrets(entry.endpoint));
      const seq = nextSeq(entry.lastSeq);
      entry.lastSeq = seq;
      const choice = chooseAnswer(newEntry.choices, entry.ruleCounts);
      const request: Held = {
        seq,
        answer: newEntry.answers[choice] as string,
        record: newEntry.record,
        entry,
        older: undefined,
        newer: undefined,
      };
      entry.requests.push(request);
      entry.bytes += costOf(request);
      totalBytes += costOf(request);
      link(request);
      // Announced before any trim, so watchers see the request, then what left.
      await options.bus.publish(id, { seq, request, capturedAtMs });

      keepBudgets(entry);
      return { seq, response, choice, responder: responders.holder(id) !== undefined };
    },

    async setAnswer(id, seq, answerJson) {
      const held = alive(id)?.requests.find((request) => request.seq === seq);
      if (!held) return false;
      const before = costOf(held);
      held.answer = answerJson;
      const growth = costOf(held) - before;
      held.entry.bytes += growth;
      totalBytes += growth;
      await options.bus.publish(id, { data: answeredMessage(seq, answerJson) });
      return true;
    },

    async setResponder(id, token, untilMs, action) {
      if (!alive(id)) return false;
      const announce = responders.apply(id, token, untilMs, action);
      if (announce) await options.bus.publish(id, { data: announce });
      return announce !== false;
    },

    async readLog(id, afterSeq) {
      const entry = alive(id);
      if (!entry) return undefined;
      // Copies without the links: a reader holding its answer pins no other request.
      const requests = entry.requests
        .filter((held) => held.seq > afterSeq)
        .map(({ seq, answer, record, forwarded }): StoredRequest =>
          forwarded === undefined ? { seq, answer, record } : { seq, answer, record, forwarded },
        );
      return { requests, lastSeq: entry.lastSeq, clearedSeq: entry.clearedSeq };
    },

    async setForwarded(id, seq, message) {
      const held = alive(id)?.requests.find((request) => request.seq === seq);
      if (!held) return false;
      const before = costOf(held);
      held.forwarded = message;
      const growth = costOf(held) - before;
      held.entry.bytes += growth;
      totalBytes += growth;
      await options.bus.publish(id, { data: message });
      // A grown request counts against both budgets like a new one.
      keepBudgets(held.entry);
      return true;
    },

    async deleteRequest(id, seq) {
      const entry = alive(id);
      if (!entry) return undefined;
      const at = entry.requests.findIndex((held) => held.seq === seq);
      if (at === -1) return false;
      const [held] = entry.requests.splice(at, 1) as [Held];
      entry.bytes -= costOf(held);
      unlink(held);
      await options.bus.publish(id, { data: removedMessage(seq) });
      return true;
    },

    async clearRequests(id) {
      const entry = alive(id);
      if (!entry) return undefined;
      removeAll(entry);
      entry.clearedSeq = entry.lastSeq;
      await options.bus.publish(id, { data: clearedMessage(entry.clearedSeq) });
      return entry.clearedSeq;
    },

    stats: async () => ({ storedBytes: totalBytes, evictedRequests, responseConfigBytes: responseBytes }),
  };
}
