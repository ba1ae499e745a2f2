import { createHash, timingSafeEqual } from 'node:crypto';
import { customAlphabet, nanoid } from 'nanoid';
import type { Config } from '../config.js';
import { RECEIVER_PREFIXES, type EndpointInfo } from '../shared/protocol.js';
import { DEFAULT_RESPONSE } from '../shared/schemas/response-config.js';
import type { EndpointKind, EndpointRecord, Store } from '../store/store.js';

/** 21 URL-safe characters: 126 random bits (at least 120, so an id cannot be guessed). */
const newEndpointId = () => nanoid();
/** 32 alphanumeric characters: about 190 random bits; no `-`/`_` so it double-clicks as one word. */
const newWatchKey = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 32);

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Constant-time: both sides are SHA-256 digests of equal length. */
export function keyMatches(key: string, keyHash: string): boolean {
  return timingSafeEqual(Buffer.from(hashKey(key), 'hex'), Buffer.from(keyHash, 'hex'));
}

/** What a creator may choose (kept endpoints only): validated by the endpoint service. */
export interface CreateOptions {
  kind: EndpointKind;
  /** Kept: how long it lives; KEPT_TTL_MS when absent. */
  ttlMs?: number | undefined;
  /** Kept: its id, chosen to be remembered; a random one when absent. */
  name?: string | undefined;
  /** Kept: false stores secret values as received. */
  redact?: boolean | undefined;
  /** The signed-in user creating it (token or proxy mode), recorded with it. */
  creator?: string | undefined;
}

/**
 * Creates an endpoint of either kind, the one way the socket and the HTTP API both use. A live
 * endpoint starts with a lease and a grace, so it survives its creator's socket closing at once
 * just as long as one left by its last watcher; a kept one lives its lifetime. 'taken' when the
 * name is, 'full' when the kind's cap is reached.
 */
export async function createEndpoint(
  store: Store,
  config: Pick<Config, 'endpoints' | 'processLimits'>,
  options: CreateOptions,
  nowMs = Date.now(),
): Promise<{ endpoint: EndpointRecord; key: string } | 'taken' | 'full'> {
  const { kind } = options;
  const key = newWatchKey();
  const deadlineMs =
    kind === 'kept'
      ? nowMs + (options.ttlMs ?? config.endpoints.keptTtlMs)
      : nowMs + config.endpoints.leaseMs + config.endpoints.graceMs;
  const endpoint: EndpointRecord = {
    id: options.name ?? newEndpointId(),
    kind,
    keyHash: hashKey(key),
    createdAt: new Date(nowMs).toISOString(),
    ...(kind === 'kept' ? { expiresAt: new Date(deadlineMs).toISOString() } : {}),
    ...(options.redact === false ? { redact: false } : {}),
    ...(options.creator === undefined ? {} : { creator: options.creator }),
    response: DEFAULT_RESPONSE,
  };
  const maxEndpoints = kind === 'kept' ? config.processLimits.maxKeptEndpoints : config.processLimits.maxEndpoints;
  const created = await store.createEndpoint(endpoint, { maxEndpoints, deadlineMs });
  return created === 'created' ? { endpoint, key } : created;
}

/** Bytes of each request's body an endpoint of this kind keeps. */
export function maxBodyBytesFor(limits: Config['requestLimits'], kind: EndpointKind): number {
  return kind === 'kept' ? limits.keptMaxBodyBytes : limits.maxBodyBytes;
}

/** What an endpoint's description tells its owner about the server's limits. */
export type EndpointInfoSettings = Pick<Config, 'endpoints' | 'endpointLimits' | 'requestLimits'>;

/** The endpoint as its owner sees it; `publicBase` is where senders reach this server (`https://host`). */
export function toEndpointInfo(
  endpoint: EndpointRecord,
  key: string,
  publicBase: string,
  config: EndpointInfoSettings,
): EndpointInfo {
  return {
    id: endpoint.id,
    url: `${publicBase}${RECEIVER_PREFIXES[endpoint.kind]}${endpoint.id}`,
    key,
    kind: endpoint.kind,
    createdAt: endpoint.createdAt,
    ...(endpoint.expiresAt === undefined ? {} : { expiresAt: endpoint.expiresAt }),
    response: endpoint.response,
    graceSeconds: config.endpoints.graceMs / 1000,
    maxRequests: config.endpointLimits.requestsPerEndpoint,
    requestsKept: config.endpointLimits.requestsPerEndpoint,
    maxBodyBytes: maxBodyBytesFor(config.requestLimits, endpoint.kind),
    ...(endpoint.kind === 'kept' ? { redact: endpoint.redact !== false } : {}),
    ...(endpoint.responder === undefined ? {} : { responder: endpoint.responder }),
  };
}
