import type { FastifyRequest } from 'fastify';

/** The origin a request came to: scheme and Host (X-Forwarded-* only from a trusted proxy). */
export const requestOrigin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/**
 * Where senders reach this server (`https://host`): PUBLIC_URL, or the origin a request came to.
 * One string per origin is kept rather than one per socket; at most 64, since Host is the
 * client's choice.
 */
export function createPublicBase(publicUrl: string | undefined): (request: FastifyRequest) => string {
  const known = new Map<string, string>();
  return (request) => {
    const origin = publicUrl ?? requestOrigin(request);
    const base = known.get(origin);
    if (base !== undefined) return base;
    if (known.size < 64) known.set(origin, origin);
    return origin;
  };
}
