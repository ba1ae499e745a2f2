import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.js';

/** `/healthz`: the process answers. `/readyz`: it can also reach its store. */
export async function healthRoute(app: FastifyInstance, options: { store: Store }): Promise<void> {
  app.get('/healthz', { logLevel: 'silent' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'silent' }, async (_request, reply) => {
    try {
      await options.store.countEndpoints();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
