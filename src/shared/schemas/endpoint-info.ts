/** An endpoint as its owner sees it: the endpoints API and the live socket's `welcome` both send it. */
import { z } from 'zod';
import { count, dateTime } from './fields.js';
import { responseConfigSchema } from './response-config.js';

export const endpointKind = z.enum(['live', 'kept'], { error: 'kind must be "live" or "kept"' });

/** An endpoint as its owner sees it: in `welcome`, and from `POST /api/endpoints`. */
export const endpointInfoSchema = z
  .strictObject({
    id: z.string().describe('The endpoint id.'),
    url: z.string().meta({ format: 'uri', description: 'The receiver URL senders use.' }),
    key: z
      .string()
      .describe(
        'The secret watch key: the bearer token of every other call. Sent only to a socket that created or joined with it, or to its creator over HTTP.',
      ),
    kind: endpointKind.describe('`live`: lives while watched, plus `graceSeconds`. `kept`: lives until `expiresAt`.'),
    createdAt: dateTime('When it was created.'),
    expiresAt: dateTime('Kept endpoints: when it expires.').optional(),
    response: responseConfigSchema,
    graceSeconds: count('Seconds a live endpoint outlives its last watcher.'),
    maxRequests: count('How many of the newest requests the endpoint keeps.'),
    // Sent alongside `maxRequests` for one release, so older pages and CLIs keep working ("kept" names an endpoint kind).
    requestsKept: count('`maxRequests` under its old name, sent for one release.')
      .meta({ deprecated: true })
      .optional(),
    maxBodyBytes: count(
      "Bytes of each request's body the endpoint keeps (the rest is counted, and the request flagged truncated).",
    ),
    redact: z
      .boolean()
      .describe(
        "Kept endpoints: whether secret header and query values are stored redacted (false: as received, by the creator's choice).",
      )
      .optional(),
    responder: z
      .string()
      .describe(
        'The `hookwatch forward --respond` answering its senders now, when one does (as in the `responder` message).',
      )
      .optional(),
  })
  .describe('An endpoint as its owner sees it (also `welcome.endpoint` on the live socket).');
export type EndpointInfo = z.infer<typeof endpointInfoSchema>;
