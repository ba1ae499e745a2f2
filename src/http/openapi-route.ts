import type { FastifyInstance } from 'fastify';
import { OPENAPI_PATH, openApiDocument } from './openapi.js';

/** `GET /api/openapi.json`: the OpenAPI 3.1 description of the HTTP API (openapi.ts), serialized once. */
export async function openApiRoute(app: FastifyInstance): Promise<void> {
  const body = JSON.stringify(openApiDocument);
  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(body),
  );
}
