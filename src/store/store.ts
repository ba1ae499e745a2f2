import type { ResponseConfig } from '../response-config.js';

export interface EndpointRecord {
  id: string;
  /** SHA-256 of the watch key, hex. The key itself is never stored. */
  keyHash: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  response: ResponseConfig;
}

/** A captured request as stored: its sequence number and its JSON form (built once). */
export interface StoredRequest {
  seq: number;
  json: string;
}

export interface AppendResult {
  request: StoredRequest;
  /** The endpoint's response configuration at capture time, so the receiver needs one round trip. */
  response: ResponseConfig;
}

/**
 * What Hookwatch keeps: live endpoints, their newest requests, their response configuration.
 * Every method is safe to call concurrently. A missing endpoint is not an error: reads return
 * `undefined`, writes return `false`/`undefined`.
 */
export interface Store {
  /** Adds a new endpoint; false (and nothing added) when `maxEndpoints` already exist. */
  createEndpoint(endpoint: EndpointRecord, maxEndpoints: number): Promise<boolean>;
  getEndpoint(id: string): Promise<EndpointRecord | undefined>;
  /** Removes the endpoint and its requests; false when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  countEndpoints(): Promise<number>;
  setResponse(id: string, response: ResponseConfig): Promise<boolean>;
  /**
   * Gives the request the endpoint's next sequence number and stores it, dropping the oldest
   * beyond the configured count. `draftJson` is the request's JSON object without `seq`; the
   * stored JSON is `{"seq":N,` + the rest of it. Undefined when the endpoint does not exist.
   */
  appendRequest(id: string, draftJson: string): Promise<AppendResult | undefined>;
  /** Stored requests with `seq > afterSeq`, oldest first. Undefined when the endpoint does not exist. */
  listRequests(id: string, afterSeq: number): Promise<StoredRequest[] | undefined>;
  /**
   * Deletes every stored request. Returns the highest sequence number cleared (0 when none was
   * ever captured): a client holding requests up to it drops them. Undefined when no endpoint.
   */
  clearRequests(id: string): Promise<number | undefined>;
  /** The highest sequence number ever cleared on this endpoint (0 when never cleared). */
  clearedSeq(id: string): Promise<number | undefined>;
}

/** `{"a":1}` + 7 -> `{"seq":7,"a":1}`. Shared by every backend so the stored form is identical. */
export function withSeq(draftJson: string, seq: number): string {
  return draftJson.length > 2 ? `{"seq":${seq},${draftJson.slice(1)}` : `{"seq":${seq}}`;
}
