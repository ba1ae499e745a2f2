import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RejectionReason } from './errors.js';
import type { StoreStats } from './store/store.js';

export interface Metrics {
  registry: Registry;
  capturedRequests: Counter;
  capturedBytes: Counter;
  truncations: Counter;
  rejections: Counter<'reason'>;
  /** By kind and ACCESS_MODE (open, token, proxy). */
  endpointsCreated: Counter<'kind' | 'mode'>;
  deliveryLagSeconds: Histogram;
  reject(reason: RejectionReason): void;
}

export interface MetricsSources {
  countEndpoints: () => Promise<number>;
  countWatchers: () => number;
  /** The store's byte count and evictions (for Redis: the shared store's, the same on every instance). */
  storeStats: () => Promise<StoreStats>;
  /** Body bytes being read right now (the in-flight cap's count). */
  readingBytes: () => number;
  /** Open TCP connections to this instance. */
  openConnections: () => number;
  /** Bytes of endpoints-API answers not yet taken by their readers. */
  apiAnswerBytes: () => number;
}

/** One registry per app (no global default registry), so tests and several apps never collide. */
export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'hookwatch_' });

  new Gauge({
    name: 'hookwatch_endpoints',
    help: 'Live endpoints in the store',
    registers: [registry],
    async collect() {
      this.set(await sources.countEndpoints());
    },
  });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('hookwatch_watchers', 'Live sockets watching an endpoint on this instance', sources.countWatchers);
  new Gauge({
    name: 'hookwatch_stored_bytes',
    help: 'Bytes of stored requests, as counted against MAX_STORED_BYTES',
    registers: [registry],
    async collect() {
      this.set((await sources.storeStats()).storedBytes);
    },
  });
  new Gauge({
    name: 'hookwatch_response_config_bytes',
    help: 'Response configurations held in this process, as counted against MAX_RESPONSE_CONFIG_BYTES (0 with Redis, which holds them)',
    registers: [registry],
    async collect() {
      this.set((await sources.storeStats()).responseConfigBytes ?? 0);
    },
  });
  new Counter({
    name: 'hookwatch_evicted_requests_total',
    help: 'Stored requests evicted to keep the stored-bytes budgets',
    registers: [registry],
    async collect() {
      // The store counts; a counter that only ever follows it stays monotonic.
      this.reset();
      this.inc((await sources.storeStats()).evictedRequests);
    },
  });
  new Counter({
    name: 'hookwatch_unreplicated_captures_total',
    help: 'Captures no Redis replica acknowledged within REDIS_REPLICA_WAIT_MS (answered all the same): a failover before a replica caught up could lose them',
    registers: [registry],
    async collect() {
      this.reset();
      this.inc((await sources.storeStats()).unreplicatedCaptures ?? 0);
    },
  });
  gauge(
    'hookwatch_reading_bytes',
    'Body bytes being read at this moment, as counted against MAX_READING_BYTES',
    sources.readingBytes,
  );
  gauge(
    'hookwatch_api_answer_bytes',
    'Bytes of endpoints-API answers their clients have not read yet, as counted against MAX_API_ANSWER_BYTES',
    sources.apiAnswerBytes,
  );
  gauge(
    'hookwatch_open_connections',
    'Open TCP connections, as counted against MAX_CONNECTIONS',
    sources.openConnections,
  );
  const rejections = new Counter({
    name: 'hookwatch_rejections_total',
    help: 'Requests and sockets turned away, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });

  return {
    registry,
    capturedRequests: new Counter({
      name: 'hookwatch_captured_requests_total',
      help: 'Requests captured',
      registers: [registry],
    }),
    capturedBytes: new Counter({
      name: 'hookwatch_captured_bytes_total',
      help: 'Body bytes received by captured requests',
      registers: [registry],
    }),
    truncations: new Counter({
      name: 'hookwatch_truncated_requests_total',
      help: 'Captured requests whose body was cut at the stored cap',
      registers: [registry],
    }),
    rejections,
    endpointsCreated: new Counter({
      name: 'hookwatch_endpoints_created_total',
      help: 'Endpoints created, by kind and ACCESS_MODE',
      labelNames: ['kind', 'mode'] as const,
      registers: [registry],
    }),
    deliveryLagSeconds: new Histogram({
      name: 'hookwatch_delivery_lag_seconds',
      help: 'Time from capture to the message being handed to a watcher socket',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    reject: (reason) => rejections.inc({ reason }),
  };
}
