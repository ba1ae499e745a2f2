// What the page remembers in this browser (localStorage): the kind of new endpoints, how long a
// kept one lives, and the endpoints it has seen (never their keys). localStorage may be switched
// off or full: a choice then lasts as long as the page, and joining over HTTP shows less.
import type { EndpointInfo } from '../../../src/shared/protocol.js';
import type { EndpointKind } from './endpoint.js';

const KIND_KEY = 'hookwatch.kind';
const KEPT_SPAN_KEY = 'hookwatch.keptSpanMs';
const KNOWN_KEY = 'hookwatch.endpoints';
const KEEP_SECRETS_KEY = 'hookwatch.keepSecrets';
/** Endpoints remembered, the most recently seen last. */
export const KNOWN_MAX = 20;
/** A kept endpoint's span before one has told the real one: the server's default, 2 h. */
export const DEFAULT_KEPT_SPAN_MS = 2 * 3600_000;

/** An endpoint as this browser last saw it: all but its key. */
export type KnownEndpoint = Omit<EndpointInfo, 'key'>;

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Not remembered.
  }
}

/** The kind of endpoint New URL makes: live unless kept was chosen. */
export function savedKind(): EndpointKind {
  return read(KIND_KEY) === 'kept' ? 'kept' : 'live';
}

export function saveKind(kind: EndpointKind): void {
  write(KIND_KEY, kind);
}

/** How long the next kept endpoint lives, as last chosen. */
export function savedKeptSpan(): number {
  const span = Number(read(KEPT_SPAN_KEY));
  return span > 0 ? span : DEFAULT_KEPT_SPAN_MS;
}

export function saveKeptSpan(ms: number): void {
  write(KEPT_SPAN_KEY, String(ms));
}

/** Whether the next kept endpoint stores secrets as received (`redact: false`): no unless chosen. */
export function savedKeepSecrets(): boolean {
  return read(KEEP_SECRETS_KEY) === 'true';
}

export function saveKeepSecrets(keep: boolean): void {
  write(KEEP_SECRETS_KEY, String(keep));
}

function knownEndpoints(): Record<string, KnownEndpoint> {
  try {
    return (JSON.parse(read(KNOWN_KEY) ?? '{}') as Record<string, KnownEndpoint> | null) ?? {};
  } catch {
    return {};
  }
}

/** The endpoint as this browser last saw it, so that joining it over HTTP can still show it fully. */
export function knownEndpoint(id: string): KnownEndpoint | undefined {
  const all = knownEndpoints();
  return Object.hasOwn(all, id) ? all[id] : undefined;
}

/** Remembers an endpoint's description (never its key), for the last KNOWN_MAX endpoints. */
export function rememberEndpoint(endpoint: EndpointInfo): void {
  const { key: _key, ...known } = endpoint;
  const all = knownEndpoints();
  delete all[endpoint.id];
  const kept = Object.entries(all).slice(-(KNOWN_MAX - 1));
  write(KNOWN_KEY, JSON.stringify(Object.fromEntries([...kept, [endpoint.id, known]])));
}
