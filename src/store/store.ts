import type { ResponseConfig } from '../response-config.js';

export type EndpointKind = 'live' | 'kept';

export interface EndpointRecord {
  id: string;
  kind: EndpointKind;
  /** SHA-256 of the watch key, hex. The key itself is never stored. */
  keyHash: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  response: ResponseConfig;
}

/**
 * A captured request as stored: its sequence number and its `request` protocol message
 * (`{"type":"request","request":{…}}`) as UTF-8 bytes, built once and sent as is to every
 * watcher. `recordOf` gives the record inside it.
 */
export interface StoredRequest {
  seq: number;
  message: Buffer;
}

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
 * What Hookwatch keeps: endpoints, their newest requests, their response configuration. Every
 * method is safe to call concurrently. A missing endpoint is not an error: reads return
 * `undefined`, writes return `false`/`undefined`.
 */
export interface Store {
  /** Adds a new endpoint; false (and nothing added) when `maxEndpoints` already exist or the id is taken. */
  createEndpoint(endpoint: EndpointRecord, maxEndpoints: number): Promise<boolean>;
  getEndpoint(id: string): Promise<EndpointRecord | undefined>;
  /** Removes the endpoint and its requests; false when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  countEndpoints(): Promise<number>;
  setResponse(id: string, response: ResponseConfig): Promise<boolean>;
  /**
   * Gives the request the endpoint's next sequence number, stores it, and announces it on the
   * bus, in one step, so announcements of one endpoint go out in seq order. Then trims: past
   * the per-endpoint count or byte budget the endpoint's oldest requests go; past the store's
   * byte budget the oldest requests of any endpoint go, and their watchers get `evicted`.
   * `draftJson` is the record's JSON without `seq`. Undefined when the endpoint does not exist.
   */
  appendRequest(id: string, draftJson: string, capturedAtMs: number): Promise<StoredRequest | undefined>;
  /** The endpoint's stored requests after `afterSeq`, and its seq counters. */
  readLog(id: string, afterSeq: number): Promise<RequestLog | undefined>;
  /** Deletes every stored request; returns the new `clearedSeq` (the last seq given). */
  clearRequests(id: string): Promise<number | undefined>;
  /** Bytes of stored requests (as counted against the budget) and requests evicted so far, for metrics. */
  stats(): Promise<StoreStats>;
}

export interface StoreStats {
  storedBytes: number;
  /** Requests evicted to keep a byte budget, since the store began. */
  evictedRequests: number;
}

export interface StoreLimits {
  requestsPerEndpoint: number;
  /** Bytes of stored requests in the whole store. */
  maxStoredBytes: number;
  maxStoredBytesPerEndpoint: number;
}

export function storeLimits(config: StoreLimits): StoreLimits {
  return {
    requestsPerEndpoint: config.requestsPerEndpoint,
    maxStoredBytes: config.maxStoredBytes,
    maxStoredBytesPerEndpoint: config.maxStoredBytesPerEndpoint,
  };
}

const MESSAGE_PREFIX = '{"type":"request","request":{"seq":';

/**
 * `{"a":1}` + 7 -> the `request` message `{"type":"request","request":{"seq":7,"a":1}}`, as
 * bytes. Shared by every backend. Built from the draft's string in one encoding pass: a large
 * record costs one buffer of its size, not a copy per step.
 */
export function toRequestMessage(draftJson: string, seq: number): Buffer {
  return Buffer.from(draftJson.length > 2 ? `${MESSAGE_PREFIX}${seq},${draftJson.slice(1)}}` : `${MESSAGE_PREFIX}${seq}}}`);
}

/** The record (`{"seq":…}`) inside a stored `request` message, without copying it. */
export function recordOf(message: Buffer): Buffer {
  return message.subarray(MESSAGE_PREFIX.length - '{"seq":'.length, message.length - 1);
}

/** What a stored request costs beyond its message bytes (objects, list slots), measured: docs/deploy.md#sizing. */
export const STORED_REQUEST_OVERHEAD_BYTES = 160;
