import type { FastifyRequest } from 'fastify';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import type { EndpointKind } from '../store/store.js';

/** Which receiver and endpoint id a raw request target names, read without decoding it. */
export function receiverTarget(url: string): { kind: EndpointKind; endpointId: string } | undefined {
  // Origin-form (`/api/…`) or absolute-form (`http://host/api/…`).
  const pathStart = url.charCodeAt(0) === 0x2f /* / */ ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart === -1) return undefined;
  for (const kind of ['live', 'kept'] as const) {
    const prefix = RECEIVER_PREFIXES[kind];
    if (!url.startsWith(prefix, pathStart)) continue;
    const rest = url.slice(pathStart + prefix.length);
    const end = rest.search(/[/?]/);
    const endpointId = end === -1 ? rest : rest.slice(0, end);
    if (endpointId !== '') return { kind, endpointId };
  }
  return undefined;
}

/** The endpoint id of a request to a receiver URL: the route's `:id`, or read from the raw target. */
export function endpointIdOf(request: FastifyRequest): string {
  return (request.params as { id?: string } | null)?.id ?? receiverTarget(request.raw.url ?? '')?.endpointId ?? '';
}
