import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.js';

/** `/metrics` in the Prometheus text format. Not logged. */
export async function metricsRoute(app: FastifyInstance, options: { metrics: Metrics }): Promise<void> {
  const { registry } = options.metrics;
  app.get('/metrics', { logLevel: 'silent' }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
