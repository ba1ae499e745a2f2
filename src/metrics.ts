import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Why a request or socket was turned away, as the `reason` label of `hookwatch_rejections_total`. */
export type RejectionReason =
  | 'endpoint_not_found'
  | 'body_too_large'
  | 'rate_limited'
  | 'headers_too_large'
  | 'bad_request'
  | 'request_timeout'
  | 'origin_not_allowed'
  | 'at_capacity'
  | 'too_many_watchers'
  | 'bad_message'
  | 'slow_watcher';

export interface Metrics {
  registry: Registry;
  capturedRequests: Counter;
  capturedBytes: Counter;
  truncations: Counter;
  rejections: Counter<'reason'>;
  deliveryLagSeconds: Histogram;
  reject(reason: RejectionReason): void;
}

export interface MetricsSources {
  countEndpoints: () => Promise<number>;
  countWatchers: () => number;
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
  new Gauge({
    name: 'hookwatch_watchers',
    help: 'Live sockets watching an endpoint on this instance',
    registers: [registry],
    collect() {
      this.set(sources.countWatchers());
    },
  });
  const rejections = new Counter({
    name: 'hookwatch_rejections_total',
    help: 'Requests and sockets turned away, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });

  return {
    registry,
    capturedRequests: new Counter({ name: 'hookwatch_captured_requests_total', help: 'Requests captured', registers: [registry] }),
    capturedBytes: new Counter({ name: 'hookwatch_captured_bytes_total', help: 'Body bytes received by captured requests', registers: [registry] }),
    truncations: new Counter({ name: 'hookwatch_truncated_requests_total', help: 'Captured requests whose body was cut at the stored cap', registers: [registry] }),
    rejections,
    deliveryLagSeconds: new Histogram({
      name: 'hookwatch_delivery_lag_seconds',
      help: 'Time from capture to the message being handed to a watcher socket',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    reject: (reason) => rejections.inc({ reason }),
  };
}
