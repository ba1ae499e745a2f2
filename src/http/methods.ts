import { METHODS } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Every method Node's parser accepts. CONNECT never reaches a route: Node hands it to 'connect'. */
export const RECEIVER_METHODS = METHODS.filter((method) => method !== 'CONNECT');

/**
 * Tells Fastify that no method carries a body it should parse. Fastify would otherwise answer
 * some requests before any route runs (415 for a malformed Content-Type, 400 for QUERY without
 * one) and would skip bodies on GET. The receiver reads every body itself, as raw bytes with its
 * own limits; no other route of ours takes a body.
 */
export function disableBodyParsing(app: FastifyInstance): void {
  for (const method of RECEIVER_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true });
}
