import type { FastifyInstance } from 'fastify';
import type { Access } from '../access/access.js';

/**
 * `GET /api/access`: how this instance decides who may create and watch, and who the caller is
 * (`user`, null when not signed in), so the page knows whether to ask for a token before it
 * tries anything. Open to everyone: it tells nothing about tokens beyond whether the one sent
 * works, the same for an unknown and a wrong one.
 */
export async function accessRoute(app: FastifyInstance, options: { access: Access }): Promise<void> {
  const { access } = options;
  app.get('/api/access', async (request, reply) => {
    let user: string | undefined;
    try {
      user = access.userOf(request.raw);
    } catch {
      user = undefined;
    }
    reply.header('cache-control', 'no-store');
    return { mode: access.mode, user: user ?? null };
  });
}
