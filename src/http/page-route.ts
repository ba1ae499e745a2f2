import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** The built page (client/ bundled by `npm run build:client`). Same depth from src/ and dist/. */
export const CLIENT_DIST = fileURLToPath(new URL('../../client/dist/', import.meta.url));

/**
 * The page may load only its own files and talk only to its own origin: no inline script, no
 * CDN, no framing. Captured content is never HTML in the page, and this stops it if it were.
 */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export async function pageRoute(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? CLIENT_DIST;
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers({
      'content-security-policy': PAGE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    });
  });

  if (!existsSync(root)) {
    app.get('/', async (_request, reply) =>
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The page is not built. Run `npm run build:client` (npm start does it for you).\n'),
    );
    return;
  }
  // Source maps are never served: a build made with them (a developer's) would hand out the
  // page's whole source, comments included, to anyone who asks.
  await app.register(fastifyStatic, {
    root,
    index: 'index.html',
    wildcard: false,
    cacheControl: true,
    maxAge: 0,
    allowedPath: (path) => !path.endsWith('.map'),
  });
}
