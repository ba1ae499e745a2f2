import { MAX_LISTED_ENDPOINTS, type EndpointKind, type Store } from '../store/store.js';

/**
 * One process without Redis: live endpoints in memory (they live while watched, so a restart
 * ends them anyway) and kept ones in the SQLite database (they outlive a restart). An id is
 * looked for in memory first: that costs nothing, and a kept id is never in memory.
 */
export function createStoreByKind(stores: { live: Store; kept: Store }): Store {
  const { live, kept } = stores;
  const byKind = (kind: EndpointKind) => (kind === 'live' ? live : kept);
  /** The store holding the id; the kept one when neither does (its answer is then "missing"). */
  const holding = async (id: string) => ((await live.findEndpointKind(id)) === undefined ? kept : live);

  return {
    async createEndpoint(endpoint, limits) {
      // One id space across both: a name a live endpoint happens to have is taken too.
      const other = endpoint.kind === 'live' ? kept : live;
      if ((await other.findEndpointKind(endpoint.id)) !== undefined) return 'taken';
      return byKind(endpoint.kind).createEndpoint(endpoint, limits);
    },
    extendEndpoint: async (id, deadlineMs) => kept.extendEndpoint(id, deadlineMs),
    getEndpoint: async (id) => (await holding(id)).getEndpoint(id),
    findEndpointKind: async (id) => (await live.findEndpointKind(id)) ?? kept.findEndpointKind(id),
    deleteEndpoint: async (id) => (await holding(id)).deleteEndpoint(id),
    countEndpoints: async () => (await live.countEndpoints()) + (await kept.countEndpoints()),
    async listEndpoints(creator) {
      const both = [...(await live.listEndpoints(creator)), ...(await kept.listEndpoints(creator))];
      return both.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).slice(-MAX_LISTED_ENDPOINTS);
    },
    async holdEndpoints(ids, holderId, leaseUntilMs, graceMs) {
      const notLive = await live.holdEndpoints(ids, holderId, leaseUntilMs, graceMs);
      return notLive.length === 0 ? [] : kept.holdEndpoints(notLive, holderId, leaseUntilMs, graceMs);
    },
    countWatchers: async (id, holderId, localCount) => (await holding(id)).countWatchers(id, holderId, localCount),
    releaseEndpoint: async (id, holderId, graceMs) => (await holding(id)).releaseEndpoint(id, holderId, graceMs),
    sweepExpired: async () => (await live.sweepExpired()) + (await kept.sweepExpired()),
    setResponse: async (id, response) => (await holding(id)).setResponse(id, response),
    appendRequest: async (id, kind, recordFor, capturedAtMs, giveUpAtMs) =>
      byKind(kind).appendRequest(id, kind, recordFor, capturedAtMs, giveUpAtMs),
    readLog: async (id, afterSeq) => (await holding(id)).readLog(id, afterSeq),
    setForwarded: async (id, seq, message) => (await holding(id)).setForwarded(id, seq, message),
    setAnswer: async (id, seq, answerJson) => (await holding(id)).setAnswer(id, seq, answerJson),
    setResponder: async (id, token, untilMs, action) => (await holding(id)).setResponder(id, token, untilMs, action),
    deleteRequest: async (id, seq) => (await holding(id)).deleteRequest(id, seq),
    clearRequests: async (id) => (await holding(id)).clearRequests(id),
    async stats() {
      const [a, b] = await Promise.all([live.stats(), kept.stats()]);
      return {
        storedBytes: a.storedBytes + b.storedBytes,
        evictedRequests: a.evictedRequests + b.evictedRequests,
        responseConfigBytes: (a.responseConfigBytes ?? 0) + (b.responseConfigBytes ?? 0),
      };
    },
  };
}
