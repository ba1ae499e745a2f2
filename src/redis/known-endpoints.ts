import type { ResponseConfig } from '../shared/schemas/response-config.js';
import type { EndpointKind } from '../store/store.js';

/** Bytes of response configurations an instance remembers; a configuration can be 64 KiB. */
const KNOWN_BYTES = 8 * 1024 * 1024;

/** What an instance last saw of an endpoint it captured for. */
export interface Known {
  kind: EndpointKind;
  /** Whether its requests are stored with their secrets redacted (fixed at creation). */
  redact: boolean;
  response: ResponseConfig;
  version: string;
  /** The highest seq this instance was given on it: Redis never numbers below it (APPEND's floor). */
  lastSeq: number;
  /** Roughly what the entry holds in memory. */
  bytes: number;
}

/**
 * What this instance last saw of the endpoints it captured for: their kind, their response
 * configuration with its version, and the highest seq it was given. A capture then costs one
 * script (APPEND), not a lookup first: APPEND refuses a gone endpoint, and a draft built for an
 * older version, which is built again for the current one. Oldest first; bounded by the bytes
 * of the configurations held.
 */
export function knownEndpoints() {
  const known = new Map<string, Known>();
  let knownBytes = 0;
  const forget = (id: string) => {
    const entry = known.get(id);
    if (!entry) return;
    known.delete(id);
    knownBytes -= entry.bytes;
  };
  const remember = (
    id: string,
    kind: EndpointKind,
    redact: boolean,
    responseJson: string,
    version: string,
    lastSeq = 0,
  ): Known => {
    forget(id);
    const entry = {
      kind,
      redact,
      response: JSON.parse(responseJson) as ResponseConfig,
      version,
      lastSeq,
      bytes: responseJson.length + id.length + 100,
    };
    known.set(id, entry);
    knownBytes += entry.bytes;
    for (const [oldest] of known) {
      if (knownBytes <= KNOWN_BYTES) break;
      forget(oldest);
    }
    return entry;
  };
  return { known: known as ReadonlyMap<string, Known>, forget, remember };
}
