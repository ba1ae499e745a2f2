import type { ResponseConfig } from '../response-config.js';
import { withSeq, type AppendResult, type EndpointRecord, type Store, type StoredRequest } from './store.js';

interface Entry {
  endpoint: EndpointRecord;
  lastSeq: number;
  clearedSeq: number;
  /** Oldest first; at most `requestsPerEndpoint` long. */
  requests: StoredRequest[];
}

export interface MemoryStoreOptions {
  requestsPerEndpoint: number;
}

/** The embedded default: everything in this process's memory, gone on restart. */
export function createMemoryStore(options: MemoryStoreOptions): Store {
  const entries = new Map<string, Entry>();

  return {
    async createEndpoint(endpoint, maxEndpoints) {
      if (entries.size >= maxEndpoints || entries.has(endpoint.id)) return false;
      entries.set(endpoint.id, { endpoint: { ...endpoint }, lastSeq: 0, clearedSeq: 0, requests: [] });
      return true;
    },

    async getEndpoint(id) {
      const entry = entries.get(id);
      return entry && { ...entry.endpoint };
    },

    async deleteEndpoint(id) {
      return entries.delete(id);
    },

    async countEndpoints() {
      return entries.size;
    },

    async setResponse(id, response: ResponseConfig) {
      const entry = entries.get(id);
      if (!entry) return false;
      entry.endpoint.response = response;
      return true;
    },

    async appendRequest(id, draftJson): Promise<AppendResult | undefined> {
      const entry = entries.get(id);
      if (!entry) return undefined;
      const seq = ++entry.lastSeq;
      const request = { seq, json: withSeq(draftJson, seq) };
      entry.requests.push(request);
      if (entry.requests.length > options.requestsPerEndpoint) entry.requests.shift();
      return { request, response: entry.endpoint.response };
    },

    async listRequests(id, afterSeq) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      return entry.requests.filter((request) => request.seq > afterSeq);
    },

    async clearRequests(id) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      entry.requests = [];
      entry.clearedSeq = entry.lastSeq;
      return entry.clearedSeq;
    },

    async clearedSeq(id) {
      return entries.get(id)?.clearedSeq;
    },
  };
}
