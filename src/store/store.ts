import type { Config } from '../config.js';
import type { AnswerChoice } from '../shared/answer-rules.js';
import type { RecordBytes, StoredRequest } from './stored-request.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';

// What a stored byte costs is a rule of the request log, written once there; the Redis store reads it here.
export { responseConfigCost, STORED_REQUEST_OVERHEAD_BYTES, storedCost } from '../log/rulebook.js';

export type EndpointKind = 'live' | 'kept';

export interface EndpointRecord {
  id: string;
  kind: EndpointKind;
  /** SHA-256 of the watch key, hex. The key itself is never stored. */
  keyHash: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** Kept endpoints: when they expire, ISO 8601 UTC. Live ones live while watched (see holdEndpoints). */
  expiresAt?: string;
  /** False: secret header and query values are stored as received (kept endpoints, by their creator's choice). Absent: redacted. */
  redact?: boolean;
  response: ResponseConfig;
  /** The signed-in user who created it (ACCESS_MODE token or proxy); absent in open mode. */
  creator?: string;
  /** The responder (`hookwatch forward --respond`) holding it now: set by `getEndpoint` only, never stored with the record. */
  responder?: string;
}

export type { StoredRequest } from './stored-request.js';

/** An endpoint's stored requests after some seq, with the numbers a client needs to resume. */
export interface RequestLog {
  /** Stored requests with `seq > afterSeq`, oldest first. */
  requests: StoredRequest[];
  /** The highest seq ever given on this endpoint (0 when none). */
  lastSeq: number;
  /** The highest seq ever cleared (0 when never cleared): a client drops what it holds up to it. */
  clearedSeq: number;
}

/**
 * What Hookwatch keeps: endpoints, their newest requests, their response configuration, and
 * how long each endpoint lives. Every method is safe to call concurrently, from several
 * instances on one shared store. A missing endpoint is not an error: reads return `undefined`,
 * writes return `false`/`undefined`. An endpoint past its deadline is missing for every method,
 * whether or not `sweepExpired` has removed it yet.
 *
 * Lifetime is a property of the stored data, never a timer in one process: each endpoint has a
 * deadline. A kept endpoint's is fixed at creation. A live endpoint's follows its leases: every
 * instance with a watcher on it holds a lease and renews it (`holdEndpoints`); the deadline is
 * the last lease's end plus the grace, and when an instance's last watcher leaves it gives its
 * lease back (`releaseEndpoint`), so the endpoint dies a grace after the last watcher anywhere
 * left, or a grace after the lease of an instance that died.
 */
export interface Store {
  /**
   * Adds a new endpoint that lives until `deadlineMs` (a live endpoint's creator then holds it):
   * 'created'; 'taken' when a living endpoint has its id (a name, for a named kept endpoint);
   * 'full' when `maxEndpoints` endpoints of its kind already live. Nothing is added unless created.
   */
  createEndpoint(
    endpoint: EndpointRecord,
    limits: { maxEndpoints: number; deadlineMs: number },
  ): Promise<'created' | 'taken' | 'full'>;
  /**
   * A kept endpoint now lives until `deadlineMs` (`expiresAt` follows), announced to its watchers
   * (`extended`) in the same step; the endpoint as it is now, or undefined when there is no
   * living kept endpoint with this id.
   */
  extendEndpoint(id: string, deadlineMs: number): Promise<EndpointRecord | undefined>;
  getEndpoint(id: string): Promise<EndpointRecord | undefined>;
  /**
   * The endpoint's kind, asked before a request's body is read. It may come from what this
   * instance saw before (the Redis store keeps a bounded cache), so an endpoint deleted or
   * expired a moment ago may still be found: `appendRequest` is the authority and then says it
   * is gone. A living endpoint is never reported missing.
   */
  findEndpointKind(id: string): Promise<EndpointKind | undefined>;
  /**
   * Removes the endpoint and its requests; false when there was none. A living one's watchers,
   * on every instance, get `expired` (reason `deleted`) in the same step, and are closed.
   */
  deleteEndpoint(id: string): Promise<boolean>;
  /** Endpoints alive now, of every kind, across every instance. */
  countEndpoints(): Promise<number>;
  /**
   * The living endpoints whose `creator` is `creator`, oldest first, at most
   * MAX_LISTED_ENDPOINTS (the newest of them when there are more); empty when none.
   */
  listEndpoints(creator: string): Promise<EndpointRecord[]>;
  /**
   * Renews `holderId`'s lease (a holder is an instance with watchers, or the endpoints API for
   * its polling clients) on each live endpoint until `leaseUntilMs` (its deadline becomes
   * at least that plus `graceMs`). Returns the ids that no longer exist (expired or deleted,
   * kept ones past their deadline included), so the caller can tell their watchers.
   */
  holdEndpoints(ids: string[], holderId: string, leaseUntilMs: number, graceMs: number): Promise<string[]>;
  /**
   * Records how many sockets watch the endpoint on `holderId` (0 forgets it) and returns how
   * many watch it on every instance that still holds a lease, announced to its watchers
   * (`watchers`) in the same step; undefined when it is gone.
   */
  countWatchers(id: string, holderId: string, localCount: number): Promise<number | undefined>;
  /** Gives back `holderId`'s lease: with no other lease left, the endpoint lives `graceMs` more. */
  releaseEndpoint(id: string, holderId: string, graceMs: number): Promise<void>;
  /** Removes endpoints past their deadline, with their requests; returns how many. */
  sweepExpired(): Promise<number>;
  /**
   * Replaces the endpoint's response configuration and announces it (`response`) in the same
   * step: 'set', undefined when there is no endpoint, or 'full' (nothing changed) when the
   * configurations this store holds in the process would pass `maxResponseConfigBytes`.
   */
  setResponse(id: string, response: ResponseConfig): Promise<'set' | 'full' | undefined>;
  /**
   * Gives the request the endpoint's next sequence number, picks its answer, stores it, and
   * announces it on the bus, in one step, so announcements of one endpoint go out in seq order.
   * Then trims: past the per-endpoint count or byte budget the endpoint's oldest requests go;
   * past the store's byte budget the oldest requests of any endpoint go, and their watchers get
   * `evicted` (log/rulebook.ts, trimEndpoint and evictAcrossEndpoints, has the rules). `recordFor` gives the new entry for the endpoint's response configuration (and whether
   * it redacts secrets) as it is at the moment of storing: the stored record and the sender's
   * answer both follow the configuration in force then, on whichever instance it was set. The
   * answer is the entry's first choice whose rule has answered fewer than its `times` since the
   * configuration was set (`chooseAnswer`; the counts are kept with the endpoint, so they hold
   * across instances). Returns the seq given, that configuration and the choice taken, or
   * undefined when no endpoint of `kind` exists. `giveUpAtMs` (this process's clock) is when the
   * caller answers its sender 503 if this has not returned: a store that can run late (Redis)
   * refuses to store the request once that moment is near, so a sender told 503 does not have
   * it stored (but see docs/deploy.md on a reply lost in transit).
   */
  appendRequest(
    id: string,
    kind: EndpointKind,
    recordFor: EntryBuilder,
    capturedAtMs: number,
    giveUpAtMs?: number,
  ): Promise<Appended | undefined>;
  /**
   * Keeps `message` (a `forwarded` protocol message) as the latest forward result of stored
   * request `seq`, replacing any before it, and announces it in the same step. False (nothing
   * kept or announced) when the endpoint or that request is no longer stored.
   */
  setForwarded(id: string, seq: number, message: string): Promise<boolean>;
  /**
   * Replaces stored request `seq`'s `answer` (its local app answered the sender: `by: forwarder`)
   * and announces it (`answered`) in the same step. False when that request is no longer stored.
   */
  setAnswer(id: string, seq: number, answerJson: string): Promise<boolean>;
  /**
   * The endpoint's responder (`hookwatch forward --respond`, named by `token`): 'claim' makes
   * it `token` until `untilMs`, whoever held it before, and announces `responder`; 'renew'
   * moves the end of a current claim of `token`; 'release' ends it and announces that nobody
   * answers now. False when there is no endpoint, or (renew, release) `token` does not hold it.
   */
  setResponder(id: string, token: string, untilMs: number, action: 'claim' | 'renew' | 'release'): Promise<boolean>;
  /**
   * The endpoint's stored requests after `afterSeq` (each with its latest forward result), and its
   * seq counters. A read never changes what is stored, whatever `afterSeq` says.
   */
  readLog(id: string, afterSeq: number): Promise<RequestLog | undefined>;
  /**
   * Deletes stored request `seq` with its forward result and announces it (`removed`) in the
   * same step: true; false when that request is not stored; undefined when there is no
   * endpoint. Its seq is never given again (seqs only grow), and the log's counters do not move.
   */
  deleteRequest(id: string, seq: number): Promise<boolean | undefined>;
  /** Deletes every stored request and announces it (`cleared`) in the same step; returns the new `clearedSeq` (the last seq given). */
  clearRequests(id: string): Promise<number | undefined>;
  /** Bytes of stored requests (as counted against the budget) and requests evicted so far, for metrics. */
  stats(): Promise<StoreStats>;
}

/** The most endpoints one `listEndpoints` gives: a page lists them, and a user holds at most MAX_KEPT_PER_USER kept ones. */
export const MAX_LISTED_ENDPOINTS = 500;

/** Builds a request's new log entry for its endpoint's configuration at the moment of storing. */
export type EntryBuilder = (response: ResponseConfig, redact: boolean) => NewEntry;

/** A captured request before the store numbers it and picks its answer. */
export interface NewEntry {
  /** The record's bytes (shared/request-frame.ts): header JSON and raw body, without `seq` and `answer`. */
  record: RecordBytes;
  /** Who may answer it, in order (answer-rules.ts). */
  choices: readonly AnswerChoice[];
  /** For each choice, the record's `answer` JSON it gives. */
  answers: readonly string[];
}

/** Whether an endpoint stores secrets redacted: kept endpoints do unless their creator chose otherwise. */
export const redactsSecrets = (endpoint: Pick<EndpointRecord, 'kind' | 'redact'>): boolean =>
  endpoint.kind === 'kept' && endpoint.redact !== false;

export interface Appended {
  seq: number;
  /** The response configuration the request was stored under: what its sender gets. */
  response: ResponseConfig;
  /** The index in the entry's `choices` of the one that answers. */
  choice: number;
  /** A responder held the endpoint as the request was stored: its sender waits for the local app's answer. */
  responder: boolean;
}

export interface StoreStats {
  storedBytes: number;
  /** Requests evicted to keep a byte budget, since the store began. */
  evictedRequests: number;
  /** Response configurations held in this process or its database, as counted against MAX_RESPONSE_CONFIG_BYTES (memory and SQLite). */
  responseConfigBytes?: number;
  /** Redis with replicas: this instance's captures answered before a replica acknowledged them. */
  unreplicatedCaptures?: number;
}

/**
 * The store cannot be reached (Redis down, or slower than REDIS_COMMAND_TIMEOUT_MS). Routes
 * answer 503 STORE_UNAVAILABLE; sockets get that error and reconnect.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

export interface StoreLimits {
  requestsPerEndpoint: number;
  /** Bytes of stored requests in the whole store. */
  maxStoredBytes: number;
  maxStoredBytesPerEndpoint: number;
  /**
   * What response configurations held in this process may cost together (`responseConfigCost`, log/rulebook.ts).
   * A store that keeps them elsewhere (Redis) holds only a bounded cache and ignores it.
   */
  maxResponseConfigBytes: number;
}

/** A store's limits, from the per-endpoint and whole-process ones. */
export function storeLimits(config: Pick<Config, 'endpointLimits' | 'processLimits'>): StoreLimits {
  return {
    requestsPerEndpoint: config.endpointLimits.requestsPerEndpoint,
    maxStoredBytes: config.processLimits.maxStoredBytes,
    maxStoredBytesPerEndpoint: config.endpointLimits.maxStoredBytesPerEndpoint,
    maxResponseConfigBytes: config.processLimits.maxResponseConfigBytes,
  };
}

/**
 * A forward result is kept with its request at most this long, as JSON (endpoint-service.ts
 * trims a longer report to fit): it is counted with the request, and this bounds how much one
 * watcher's reports can make a request grow.
 */
export const MAX_FORWARDED_BYTES = 16 * 1024;
