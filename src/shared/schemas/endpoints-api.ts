/**
 * The bodies of the endpoints API (docs/protocol.md, "The endpoints API"): what its calls take
 * and answer. The server validates what it takes with these schemas, the OpenAPI document
 * describes both from them (src/http/openapi.ts), and the page and the CLI read the types.
 */
import { z } from 'zod';
import { capturedRequestSchema } from './captured-request.js';
import { endpointInfoSchema, endpointKind } from './endpoint-info.js';
import { count, dateTime } from './fields.js';
import { forwardedMessageSchema } from './live-messages.js';
import { responseConfigSchema } from './response-config.js';

/** A kept endpoint's chosen name: 3-64 of a-z, 0-9 and -, starting with a letter (its id, so its URL). */
export const ENDPOINT_NAME = /^[a-z][a-z0-9-]{2,63}$/;

/** The shortest `ttlMs`; the longest is KEPT_MAX_TTL_MS, a setting the server adds (endpoint-service.ts). */
export const MIN_TTL_MS = 60_000;

/** The longest a poll may wait for a request (`waitMs`). */
export const MAX_WAIT_MS = 60_000;

/** A kept endpoint's lifetime from now, in ms: at least a minute. */
export const ttlMsSchema = z
  .number({ error: 'ttlMs must be a number of milliseconds' })
  .int('ttlMs must be a whole number of milliseconds')
  .min(MIN_TTL_MS, `ttlMs must be at least ${MIN_TTL_MS} (a minute)`);

/** `POST /api/endpoints`: the creator's choices. */
export const createEndpointSchema = z
  .strictObject({
    kind: endpointKind.default('live').describe('`live` lives while watched; `kept` for `ttlMs`.'),
    ttlMs: ttlMsSchema
      .describe(`How long a kept endpoint lives, from ${MIN_TTL_MS} to KEPT_MAX_TTL_MS (default KEPT_TTL_MS).`)
      .optional(),
    // Taken in any case (`Stripe-Dev` is `stripe-dev`): a URL's path is case-sensitive, so the id is kept in one.
    name: z
      .string({ error: 'name must be a string' })
      .trim()
      .toLowerCase()
      .regex(
        ENDPOINT_NAME,
        'the name must be 3 to 64 letters, digits and dashes, starting with a letter, such as stripe-dev',
      )
      .describe(
        "A kept endpoint's id of its choice, while no living endpoint has it (NAME_TAKEN); refused when NAMED_ENDPOINTS=false.",
      )
      .optional(),
    redact: z
      .boolean({ error: 'redact must be true or false' })
      .describe('`false`: secrets are stored as received (refused when ALLOW_UNREDACTED=false). Default true.')
      .optional(),
  })
  .describe(
    "The creator's choices. `ttlMs`, `name` and `redact` apply to kept endpoints only. An empty body makes a live endpoint.",
  );
export type CreateEndpoint = z.input<typeof createEndpointSchema>;

/** `POST /api/endpoints/<id>/extend`. */
export const extendEndpointSchema = z
  .strictObject({ ttlMs: ttlMsSchema.describe(`From ${MIN_TTL_MS} to KEPT_MAX_TTL_MS.`) })
  .describe('A new lifetime for a kept endpoint, from now.');

/** `GET /api/endpoints`: a signed-in user's own living endpoints, never their keys (the creator opens them without one). */
export const ownEndpointsSchema = z
  .strictObject({
    user: z.string().describe('The signed-in caller.'),
    endpoints: z.array(endpointInfoSchema.omit({ key: true })).describe('Oldest first.'),
  })
  .describe("A signed-in user's own living endpoints, without their keys.");
export type OwnEndpointsAnswer = z.infer<typeof ownEndpointsSchema>;

/** `GET /api/access`: how this instance decides who may create and watch, and who the caller is (null: not signed in). */
export const accessSchema = z
  .strictObject({
    mode: z.enum(['open', 'token', 'proxy']).describe('ACCESS_MODE.'),
    user: z.string().nullable().describe('The signed-in caller, null when none.'),
  })
  .describe('How this instance decides who may create and watch, and who the caller is.');
export type AccessAnswer = z.infer<typeof accessSchema>;

export const extendedSchema = z
  .strictObject({ expiresAt: dateTime('When it now expires.') })
  .describe("The kept endpoint's new end of life.");
export const responseSetSchema = z
  .strictObject({ response: responseConfigSchema })
  .describe('The configuration now in force.');
export const clearedSchema = z
  .strictObject({ clearedSeq: count('Drop any request held with `seq <= clearedSeq`.') })
  .describe('The log was cleared up to this seq.');

/** `GET /api/endpoints/<id>/requests`: one page of the stored requests (built as bytes by endpoints-route.ts). */
export const pollAnswerSchema = z
  .strictObject({
    lastSeq: count('The highest seq the endpoint has given (0 when none).'),
    clearedSeq: count('The log was cleared up to this seq.'),
    gap: z
      .boolean()
      .describe('Requests after `afterSeq` were already dropped (the per-endpoint count or a byte budget).'),
    more: z
      .boolean()
      .describe(
        'More requests are stored than this page holds: ask again at once with `afterSeq` = the last seq received.',
      ),
    expiresAt: z
      .string()
      .meta({ format: 'date-time' })
      .nullable()
      .describe('Kept endpoints: when it expires; null for live ones.'),
    forwarded: z
      .array(forwardedMessageSchema)
      .describe('The latest forward result of each request in this page, if any.'),
    requests: z.array(capturedRequestSchema).describe('Oldest first, about 4 MiB of records at most (at least one).'),
  })
  .describe('One page of the stored requests after `afterSeq`.');
export type PollAnswer = z.infer<typeof pollAnswerSchema>;

/** Every error Hookwatch itself answers (docs/errors.md), with its codes: any string, or the server's table of them. */
export const errorBodyOf = (code: z.ZodType<string>) =>
  z
    .strictObject({ error: z.strictObject({ code, message: z.string().describe('What went wrong, for people.') }) })
    .describe('Every error Hookwatch itself answers (docs/errors.md).');
export const errorBodySchema = errorBodyOf(z.string());
export type ErrorBody = z.infer<typeof errorBodySchema>;

export const healthSchema = z.strictObject({ status: z.literal('ok') }).describe('The process answers.');
export const readinessSchema = z
  .strictObject({ status: z.enum(['ready', 'unavailable']) })
  .describe('Whether the store can be reached.');
