import { createRequire } from 'node:module';
import type { z } from 'zod';
import { ENDPOINT_NAME } from '../endpoints/endpoint-service.js';
import { errors, type ErrorCode } from '../errors.js';
import type { CapturedRequest, MultipartPart } from '../shared/captured-request.js';
import { MAX_RULE_CONDITIONS, MAX_RULE_NAME_CHARS, MAX_RULES, type AnswerRule, type RuleAnswer, type RuleWhen } from '../shared/answer-rules.js';
import { LIVE_PATH, MAX_AFTER_SEQ, RECEIVER_PREFIXES, SUBPROTOCOL, type CreateMessage, type EndpointInfo, type ForwardedMessage } from '../shared/protocol.js';
import type { responseConfigSchema, ResponseConfig } from '../shared/response-config.js';
import {
  DEFAULT_RESPONSE,
  DENIED_RESPONSE_HEADERS,
  MAX_RESPONSE_BODY_BYTES,
  MAX_RESPONSE_BODY_ESCAPED_BYTES,
  MAX_RESPONSE_DELAY_MS,
  MAX_RESPONSE_HEADERS,
  RESPONSE_CONTENT_TYPES,
} from '../shared/response-limits.js';
import type { EndpointKind } from '../store/store.js';
import { RESPONSE_SOURCE_HEADER } from '../answers/receiver-headers.js';
import { MAX_WAIT_MS } from './endpoints-route.js';

/**
 * The OpenAPI 3.1 description of the HTTP API, served at OPENAPI_PATH (openapi-route.ts).
 * test/integration/openapi.test.ts keeps it in step with the registered routes and checks a
 * real answer against it. `servers` is left out: the base URL is PUBLIC_URL or the request's
 * own, so clients resolve paths against wherever they fetched this document.
 */
export const OPENAPI_PATH = '/api/openapi.json';

/** Read once at start: `../../package.json` is the package root from src/http and dist/http alike. */
const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

// ---- the subset of OpenAPI 3.1 / JSON Schema 2020-12 this document uses ----

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

export interface JsonSchema {
  $ref?: string;
  title?: string;
  description?: string;
  type?: JsonType | JsonType[];
  enum?: ReadonlyArray<string | number | boolean | null>;
  const?: string | number | boolean | null;
  default?: unknown;
  deprecated?: boolean;
  format?: 'date-time' | 'uri';
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxProperties?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema | false;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

interface MediaType {
  schema: JsonSchema;
}

interface Header {
  description: string;
  schema: JsonSchema;
}

interface Response {
  description: string;
  headers?: Record<string, Header>;
  content?: Record<string, MediaType>;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  required: boolean;
  /** Reserved characters (`/`) sent as they are: the receiver's sub-path holds slashes (OpenAPI 3.2's allowReserved, which 3.1 refuses on a path parameter). */
  'x-allow-reserved'?: boolean;
  schema: JsonSchema;
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: Tag[];
  parameters?: Parameter[];
  requestBody?: { description: string; required: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response>;
  security?: Array<Record<string, string[]>>;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

export type PathItem = { summary?: string; description?: string; parameters?: Parameter[] } & { [M in HttpMethod]?: Operation } & {
  /**
   * The route takes every method Node parses (receiver-route.ts), more than OpenAPI can name: the
   * common ones are described, and the test accepts any other method on such a path.
   */
  'x-hookwatch-any-method'?: true;
};

export interface OpenApiDocument {
  openapi: '3.1.1';
  info: { title: string; version: string; summary: string; description: string; license: { name: string; identifier: string } };
  jsonSchemaDialect: string;
  tags: Array<{ name: Tag; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<SchemaName, JsonSchema>;
    securitySchemes: Record<'watchKey', { type: 'http'; scheme: 'bearer'; description: string }>;
  };
}

type Tag = 'endpoints' | 'receivers' | 'live' | 'operations';

type SchemaName =
  | 'ErrorCode'
  | 'Error'
  | 'ResponseConfig'
  | 'ResponseConfigInput'
  | 'ResponseHeader'
  | 'AnswerRule'
  | 'EndpointInfo'
  | 'CreateEndpoint'
  | 'ExtendEndpoint'
  | 'Extended'
  | 'ResponseSet'
  | 'Cleared'
  | 'ParamMap'
  | 'MultipartPart'
  | 'CapturedRequest'
  | 'ForwardedMessage'
  | 'PollAnswer'
  | 'Health'
  | 'Readiness';

/** The answer of `GET /api/endpoints/{id}/requests` (built as bytes by endpoints-route.ts). */
export interface PollAnswer {
  lastSeq: number;
  clearedSeq: number;
  gap: boolean;
  more: boolean;
  expiresAt: string | null;
  forwarded: ForwardedMessage[];
  requests: CapturedRequest[];
}

// ---- helpers ----

const ref = (name: SchemaName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

type OptionalKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/**
 * A closed object schema for the TypeScript type T: every property of T described (no more, no
 * less), and every property required but the `optional` ones, which T must allow to be absent.
 */
function objectOf<T>(description: string, properties: { [K in keyof T]-?: JsonSchema }, optional: ReadonlyArray<OptionalKeys<T>> = []): JsonSchema {
  const skipped = new Set<PropertyKey>(optional);
  return {
    type: 'object',
    description,
    properties: properties as Record<string, JsonSchema>,
    required: Object.keys(properties).filter((key) => !skipped.has(key)),
    additionalProperties: false,
  };
}

const integer = (description: string, minimum = 0, maximum?: number): JsonSchema => ({
  type: 'integer',
  description,
  minimum,
  ...(maximum === undefined ? {} : { maximum }),
});
const string = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const boolean = (description: string): JsonSchema => ({ type: 'boolean', description });
const dateTime = (description: string): JsonSchema => string(description, { format: 'date-time' });
const pairs = (description: string, name: JsonSchema, value: JsonSchema): JsonSchema => ({
  type: 'array',
  description,
  items: { type: 'array', prefixItems: [name, value], items: false, minItems: 2, maxItems: 2 },
});

const json = (description: string, schema: JsonSchema, headers?: Record<string, Header>): Response => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const RETRY_AFTER: Record<string, Header> = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } } };

/** An error answer (docs/errors.md) that may carry only the given codes. */
function errorAnswer(description: string, codes: readonly ErrorCode[], headers?: Record<string, Header>): Response {
  const schema: JsonSchema = {
    allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } }],
  };
  return json(`${description} (${codes.join(', ')}).`, schema, headers);
}

const WATCH_KEY = [{ watchKey: [] }];
const NO_AUTH: Array<Record<string, string[]>> = [];

const endpointId: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The endpoint id (or the name its creator chose).',
  schema: { type: 'string', minLength: 1 },
};

const notFound = errorAnswer('Unknown or expired endpoint, or a wrong or missing watch key: the same answer, so nobody learns anything about ids', ['ENDPOINT_NOT_FOUND']);
/** Every endpoints-API call on a private instance (ACCESS_MODE token or proxy) without a signed-in user. */
const unauthorized = errorAnswer('ACCESS_MODE token or proxy: no valid X-Hookwatch-Token, or no user from the sign-in proxy (TRUST_PROXY)', ['UNAUTHORIZED']);
const storeDown = (...also: ErrorCode[]) => errorAnswer('The store is unreachable, or the service is at capacity', [...also, 'STORE_UNAVAILABLE']);
const readsBody = (description: string, schema: JsonSchema, required: boolean): Operation['requestBody'] => ({
  description: `${description} Read as JSON whatever its Content-Type.`,
  required,
  content: { 'application/json': { schema } },
});

// ---- schemas ----

/** The shortest `ttlMs`, as endpoint-service.ts checks it (the longest is KEPT_MAX_TTL_MS, a setting). */
const MIN_TTL_MS = 60_000;
const HEADER_NAME_PATTERN = "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$"; // as response-config.ts checks it
const HEADER_VALUE_PATTERN = '^[\\t\\x20-\\x7e]{0,1024}$'; // as response-config.ts checks it

const responseConfigProperties = {
  status: {
    type: 'integer',
    description: 'The status the receiver URL answers with: 200-299 or 400-599 (never 1xx or 3xx).',
    anyOf: [
      { minimum: 200, maximum: 299 },
      { minimum: 400, maximum: 599 },
    ],
  },
  body: string(
    `The answer's body: at most ${MAX_RESPONSE_BODY_BYTES} bytes of UTF-8, and at most ${MAX_RESPONSE_BODY_ESCAPED_BYTES} once JSON-escaped (a control character counts 6). Never sent with 204.`,
    { maxLength: MAX_RESPONSE_BODY_BYTES, default: '' },
  ),
  contentType: { type: 'string', description: "The answer's Content-Type.", enum: RESPONSE_CONTENT_TYPES, default: DEFAULT_RESPONSE.contentType },
  headers: {
    type: 'array',
    description: 'Extra headers, sent as given: in order, with their case, a repeated name once per pair.',
    items: ref('ResponseHeader'),
    maxItems: MAX_RESPONSE_HEADERS,
    default: [],
  },
  delayMs: { ...integer('How long the receiver waits before answering.', 0, MAX_RESPONSE_DELAY_MS), default: 0 },
  rules: {
    type: 'array',
    description: 'Answer rules (docs/protocol.md "Answer rules"): the first that matches a request and is not passed over answers it; else the fields above do.',
    items: ref('AnswerRule'),
    maxItems: MAX_RULES,
  },
} satisfies Record<keyof ResponseConfig, JsonSchema>;

const conditionMap = (description: string): JsonSchema => ({
  type: 'object',
  description: `${description} Values are compared as text; "*" only asks that it be present.`,
  additionalProperties: { type: 'string', maxLength: 1024 },
  maxProperties: MAX_RULE_CONDITIONS,
});

const paramMap: JsonSchema = {
  type: 'object',
  description: 'A query string or form body: a repeated name becomes a list, in the order received.',
  additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
};

const schemas: Record<SchemaName, JsonSchema> = {
  ErrorCode: { type: 'string', description: 'A stable error code (docs/errors.md).', enum: Object.keys(errors) as ErrorCode[] },
  Error: {
    type: 'object',
    description: 'Every error Hookwatch itself answers (docs/errors.md).',
    properties: {
      error: {
        type: 'object',
        properties: { code: ref('ErrorCode'), message: string('What went wrong, for people.') },
        required: ['code', 'message'],
        additionalProperties: false,
      },
    },
    required: ['error'],
    additionalProperties: false,
  },
  ResponseHeader: {
    type: 'array',
    description: `A [name, value] pair. Names are HTTP tokens; denied (case-insensitive, * a prefix): ${DENIED_RESPONSE_HEADERS.join(', ')}.`,
    prefixItems: [
      { type: 'string', pattern: HEADER_NAME_PATTERN },
      { type: 'string', pattern: HEADER_VALUE_PATTERN },
    ],
    items: false,
    minItems: 2,
    maxItems: 2,
  },
  AnswerRule: objectOf<AnswerRule>(
    'One answer rule. Placeholders in `answer.body` and header values: {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}}, {{seq}}.',
    {
      name: string('Shown on the page and recorded in `answer.name`.', { maxLength: MAX_RULE_NAME_CHARS }),
      when: objectOf<RuleWhen>(
        'All given must hold.',
        {
          method: string('Case-insensitive.'),
          path: string('A glob on the sub-path: * within one segment, ** across segments, / alone the bare URL.'),
          query: conditionMap('Query parameters by name.'),
          headers: conditionMap('Headers by name, case-insensitive.'),
          json: conditionMap('Dotted paths into the JSON body (items.0.id).'),
        },
        ['method', 'path', 'query', 'headers', 'json'],
      ),
      times: integer('Answers only its first N matches (counted across instances; reset when the configuration is set), then is passed over.', 1),
      chance: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: 'A match is answered by this rule with this probability, else passed over.' },
      answer: objectOf<RuleAnswer>(
        'The answer: the default answer\'s fields, each optional (status 200).',
        {
          status: responseConfigProperties.status,
          body: responseConfigProperties.body,
          contentType: responseConfigProperties.contentType,
          headers: responseConfigProperties.headers,
          delayMs: responseConfigProperties.delayMs,
        },
        ['status', 'body', 'contentType', 'headers', 'delayMs'],
      ),
    },
    ['name', 'when', 'times', 'chance'],
  ),
  ResponseConfig: objectOf<ResponseConfig>('What a receiver URL answers senders with.', responseConfigProperties, ['rules']),
  ResponseConfigInput: objectOf<z.input<typeof responseConfigSchema>>(
    'A response configuration to set: every field but `status` may be left out for its default.',
    responseConfigProperties,
    ['body', 'contentType', 'headers', 'delayMs', 'rules'],
  ),
  EndpointInfo: objectOf<EndpointInfo>(
    'An endpoint as its owner sees it (also `welcome.endpoint` on the live socket).',
    {
      id: string('The endpoint id.'),
      url: string('The receiver URL senders use.', { format: 'uri' }),
      key: string('The secret watch key: the bearer token of every other call. Shown only to its creator.'),
      kind: { type: 'string', enum: ['live', 'kept'], description: '`live`: lives while watched, plus `graceSeconds`. `kept`: lives until `expiresAt`.' },
      createdAt: dateTime('When it was created.'),
      expiresAt: dateTime('Kept endpoints: when it expires.'),
      response: ref('ResponseConfig'),
      graceSeconds: integer('Seconds a live endpoint outlives its last watcher.'),
      maxRequests: integer('How many of the newest requests the endpoint keeps.'),
      requestsKept: { ...integer('`maxRequests` under its old name, sent for one release.'), deprecated: true },
      maxBodyBytes: integer("Bytes of each request's body the endpoint keeps (the rest is counted, and the request flagged truncated)."),
      redact: boolean('Kept endpoints: whether secret header and query values are stored redacted.'),
      responder: string('The `hookwatch forward --respond` answering its senders now, when one does.'),
    },
    ['expiresAt', 'requestsKept', 'redact', 'responder'],
  ),
  CreateEndpoint: objectOf<Omit<CreateMessage, 'type' | 'token'>>(
    'The creator\'s choices. `ttlMs`, `name` and `redact` apply to kept endpoints only. An empty body makes a live endpoint.',
    {
      kind: { type: 'string', enum: ['live', 'kept'], default: 'live', description: '`live` lives while watched; `kept` for `ttlMs`.' },
      ttlMs: integer(`How long a kept endpoint lives, from ${MIN_TTL_MS} to KEPT_MAX_TTL_MS (default KEPT_TTL_MS).`, MIN_TTL_MS),
      name: string('A kept endpoint\'s id of its choice, while no living endpoint has it (NAME_TAKEN); refused when NAMED_ENDPOINTS=false.', {
        pattern: ENDPOINT_NAME.source,
      }),
      redact: boolean('`false`: secrets are stored as received (refused when ALLOW_UNREDACTED=false). Default true.'),
    },
    ['kind', 'ttlMs', 'name', 'redact'],
  ),
  ExtendEndpoint: objectOf<{ ttlMs: number }>('A new lifetime for a kept endpoint, from now.', {
    ttlMs: integer(`From ${MIN_TTL_MS} to KEPT_MAX_TTL_MS.`, MIN_TTL_MS),
  }),
  Extended: objectOf<{ expiresAt: string }>('The kept endpoint\'s new end of life.', { expiresAt: dateTime('When it now expires.') }),
  ResponseSet: objectOf<{ response: ResponseConfig }>('The configuration now in force.', { response: ref('ResponseConfig') }),
  Cleared: objectOf<{ clearedSeq: number }>('The log was cleared up to this seq.', {
    clearedSeq: integer('Drop any request held with `seq <= clearedSeq`.'),
  }),
  ParamMap: paramMap,
  MultipartPart: objectOf<MultipartPart>('One part of a `multipart/form-data` body.', {
    name: string('The field name.'),
    filename: { type: ['string', 'null'], description: 'A file part\'s file name, else null.' },
    contentType: { type: ['string', 'null'], description: "The part's Content-Type, or null." },
    size: integer("Bytes of the part's content that were stored."),
    offset: { type: ['integer', 'null'], minimum: 0, description: 'Where the content starts in the decoded stored body; null when it could not be located.' },
    text: { type: ['string', 'null'], description: 'A field part\'s text (64 KiB for all fields together), else null.' },
    truncated: boolean('The stored body (or a parser limit) cut this part short.'),
  }),
  CapturedRequest: objectOf<CapturedRequest>(
    'One captured request, exactly as stored and sent to watchers (docs/protocol.md, `request`).',
    {
      seq: integer('Per-endpoint sequence number from 1, strictly increasing, never reused.', 1),
      method: string('As received: every method Node parses except CONNECT.'),
      url: string('The raw request target: path and query exactly as sent (kept endpoints: secrets written %5Bredacted%5D).'),
      subPath: string('The path after the receiver URL, "" when none.'),
      query: ref('ParamMap'),
      headers: pairs('[name, value] pairs in arrival order, original case, duplicates kept (each byte one Latin-1 character).', { type: 'string' }, { type: 'string' }),
      contentType: { type: ['string', 'null'], description: 'The first Content-Type header, or null.' },
      body: string('The stored bytes: UTF-8 text when `bodyEncoding` is `utf8`, else base64.'),
      bodyEncoding: { type: 'string', enum: ['utf8', 'base64'], description: 'How `body` holds the bytes.' },
      isJson: boolean('The complete body parses as JSON, whatever the content type.'),
      form: { anyOf: [ref('ParamMap'), { type: 'null' }], description: 'Fields of an `application/x-www-form-urlencoded` body of at most 64 KiB, else null.' },
      parts: { anyOf: [{ type: 'array', items: ref('MultipartPart') }, { type: 'null' }], description: 'The parts of a `multipart/form-data` body, else null.' },
      omitted: { type: 'array', items: { type: 'string', enum: ['form', 'parts', 'query'] }, description: 'Derived views left out to keep the record bounded.' },
      size: integer('Bytes the sender sent (past the read limit: bytes read before stopping).'),
      storedSize: integer('Bytes held in `body` once decoded.'),
      truncated: boolean('`size > storedSize`.'),
      remoteAddress: string('The sender address (from X-Forwarded-For only when TRUST_PROXY trusts the proxy).'),
      receivedAt: dateTime('Capture time, UTC with milliseconds.'),
      answer: objectOf<CapturedRequest['answer']>(
        'What the sender got, and who chose it.',
        {
          status: integer('The status sent: the default answer\'s, a rule\'s, the local app\'s, or 413 past the read limit.', 100, 599),
          delayMs: integer('The delay before the answer (for the local app\'s: how long the sender waited for it).'),
          by: { type: 'string', enum: ['default', 'rule', 'forwarder', 'error'], description: 'The default answer, a rule, the local app through `hookwatch forward --respond`, or Hookwatch\'s own 413.' },
          rule: integer('`by: rule`: the rule\'s index.'),
          name: string('`by: rule`: the rule\'s name, when it has one.'),
          droppedHeaders: { type: 'array', items: { type: 'string' }, description: '`by: forwarder`: the local app\'s headers not passed on (hop-by-hop or denied).' },
        },
        ['rule', 'name', 'droppedHeaders'],
      ),
      redacted: { type: 'array', items: { type: 'string' }, description: 'Kept endpoints: the headers whose values were replaced by `[redacted]` before storage.' },
      redactedQuery: { type: 'array', items: { type: 'string' }, description: 'Kept endpoints: the query parameters whose values were replaced by `[redacted]` before storage.' },
    },
    ['redacted', 'redactedQuery'],
  ),
  ForwardedMessage: objectOf<ForwardedMessage>(
    'What a forwarder (`hookwatch forward`) got from its target for one request, as the socket\'s `forwarded` message (redacted as the endpoint\'s requests are).',
    {
      type: { const: 'forwarded' },
      seq: integer('The captured request it answers.', 1),
      target: string('Where it went, as the forwarder names it.'),
      status: integer("The target's status; absent when the forward failed.", 100, 599),
      error: string('Why the forward failed.'),
      durationMs: { type: 'number', minimum: 0, description: 'How long it took.' },
      headers: pairs("The answer's headers, in order.", { type: 'string' }, { type: 'string' }),
      body: string("The start of the answer's body: UTF-8 text, or base64."),
      bodyEncoding: { type: 'string', enum: ['utf8', 'base64'], description: 'How `body` holds the bytes.' },
      bodyTruncated: boolean('The body was cut.'),
    },
    ['status', 'error'],
  ),
  PollAnswer: objectOf<PollAnswer>('One page of the stored requests after `afterSeq`.', {
    lastSeq: integer('The highest seq the endpoint has given (0 when none).'),
    clearedSeq: integer('The log was cleared up to this seq.'),
    gap: boolean('Requests after `afterSeq` were already dropped (the per-endpoint count or a byte budget).'),
    more: boolean('More requests are stored than this page holds: ask again at once with `afterSeq` = the last seq received.'),
    expiresAt: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description: 'Kept endpoints: when it expires; null for live ones.' },
    forwarded: { type: 'array', items: ref('ForwardedMessage'), description: 'The latest forward result of each request in this page, if any.' },
    requests: { type: 'array', items: ref('CapturedRequest'), description: 'Oldest first, about 4 MiB of records at most (at least one).' },
  }),
  Health: objectOf<{ status: 'ok' }>('The process answers.', { status: { const: 'ok' } }),
  Readiness: objectOf<{ status: 'ready' | 'unavailable' }>('Whether the store can be reached.', { status: { type: 'string', enum: ['ready', 'unavailable'] } }),
};

// ---- paths ----

const endpointsPaths: Record<string, PathItem> = {
  '/api/endpoints': {
    get: {
      operationId: 'listOwnEndpoints',
      summary: "A signed-in user's own endpoints",
      description:
        'ACCESS_MODE token or proxy: the living endpoints the caller created, oldest first (at most 500), without their keys: their creator opens them without one. Every call of this API takes, in those modes, the access token as `X-Hookwatch-Token` (token) or the sign-in proxy\'s user header (proxy), else 401 UNAUTHORIZED. In open mode: 400.',
      tags: ['endpoints'],
      security: NO_AUTH,
      responses: {
        '200': json('The caller and their endpoints (Cache-Control: no-store).', {
          type: 'object',
          properties: { user: { type: 'string' }, endpoints: { type: 'array', items: { type: 'object' } } },
          required: ['user', 'endpoints'],
        }),
        '400': errorAnswer('This instance has no users (ACCESS_MODE=open)', ['INVALID_REQUEST']),
        '401': errorAnswer('Not signed in: no valid access token, or no user from the sign-in proxy', ['UNAUTHORIZED']),
        '503': storeDown(),
      },
    },
    post: {
      operationId: 'createEndpoint',
      summary: 'Create an endpoint',
      description:
        'Makes a live endpoint (watch it on the socket or by polling, or it is gone after the grace) or a kept one. At most KEPT_CREATES_PER_ADDRESS kept endpoints per window per address (shared with the socket\'s `create`), MAX_KEPT_ENDPOINTS in all.',
      tags: ['endpoints'],
      security: NO_AUTH,
      requestBody: readsBody('The creator\'s choices; none for a live endpoint.', ref('CreateEndpoint'), false),
      responses: {
        '401': unauthorized,
        '201': json('The new endpoint with its watch key (Cache-Control: no-store).', ref('EndpointInfo')),
        '400': errorAnswer('A body that is not the JSON this call takes, or a choice this server refuses', ['INVALID_REQUEST']),
        '409': errorAnswer('A living endpoint already has this name', ['NAME_TAKEN']),
        '429': errorAnswer('Too many new endpoints from this address (from this user, when signed in), or the signed-in user holds MAX_KEPT_PER_USER kept endpoints', ['RATE_LIMITED', 'TOO_MANY_KEPT'], RETRY_AFTER),
        '503': storeDown('AT_CAPACITY'),
      },
    },
  },
  '/api/endpoints/{id}': {
    parameters: [endpointId],
    delete: {
      operationId: 'deleteEndpoint',
      summary: 'Delete an endpoint',
      description: 'Every watcher gets `expired` and is closed with 4004; then the id answers 404 everywhere.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      responses: { '401': unauthorized, '204': { description: 'Deleted.' }, '404': notFound, '503': storeDown() },
    },
  },
  '/api/endpoints/{id}/requests': {
    parameters: [endpointId],
    get: {
      operationId: 'pollRequests',
      summary: 'Read the captured requests after a seq (long poll with waitMs)',
      description:
        'Pages of about 4 MiB of records: `more: true` says to ask again at once. With `waitMs`, an empty answer waits until a request is stored on any instance, or `waitMs` passes. Polling a live endpoint keeps it alive, as a watcher does. Answers a client has not read yet are bounded (MAX_API_ANSWER_BYTES, MAX_API_ANSWER_BYTES_PER_ADDRESS).',
      tags: ['endpoints'],
      security: WATCH_KEY,
      parameters: [
        {
          name: 'afterSeq',
          in: 'query',
          required: false,
          description: 'Only requests with a greater seq (decimal digits).',
          schema: { type: 'integer', minimum: 0, maximum: MAX_AFTER_SEQ, default: 0 },
        },
        {
          name: 'waitMs',
          in: 'query',
          required: false,
          description: 'When nothing after `afterSeq` is stored yet, wait up to this long for it (decimal digits).',
          schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 0 },
        },
      ],
      responses: {
        '401': unauthorized,
        '200': json('The stored requests after `afterSeq`, oldest first (Cache-Control: no-store).', ref('PollAnswer')),
        '400': errorAnswer('A bad `afterSeq` or `waitMs`', ['INVALID_REQUEST']),
        '404': notFound,
        '429': errorAnswer('Answers this address has not read yet are past their bound', ['RATE_LIMITED'], RETRY_AFTER),
        '503': storeDown('AT_CAPACITY'),
      },
    },
    delete: {
      operationId: 'clearRequests',
      summary: 'Clear the captured requests',
      description: 'Every watcher gets `cleared`.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      responses: { '401': unauthorized, '200': json('Cleared.', ref('Cleared')), '404': notFound, '503': storeDown() },
    },
  },
  '/api/endpoints/{id}/requests/{seq}': {
    parameters: [endpointId, { name: 'seq', in: 'path', required: true, description: 'The stored request\'s seq.', schema: { type: 'integer', minimum: 1 } }],
    delete: {
      operationId: 'deleteRequest',
      summary: 'Delete one captured request',
      description: 'Deletes the stored request with its forward result; every watcher gets `removed`. Its seq is never given again.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      responses: {
        '401': unauthorized,
        '204': { description: 'Deleted.' },
        '400': errorAnswer('A seq that is not a whole number of at least 1', ['INVALID_REQUEST']),
        '404': errorAnswer('No such endpoint (as for every call), or that request is not stored', ['ENDPOINT_NOT_FOUND', 'REQUEST_NOT_FOUND']),
        '503': storeDown(),
      },
    },
  },
  '/api/endpoints/{id}/response': {
    parameters: [endpointId],
    put: {
      operationId: 'setResponse',
      summary: 'Set what the receiver URL answers',
      description: 'Applied at once; every watcher gets `response`. AT_CAPACITY past MAX_RESPONSE_CONFIG_BYTES.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      requestBody: readsBody('The response configuration.', ref('ResponseConfigInput'), true),
      responses: {
        '401': unauthorized,
        '200': json('The configuration now in force.', ref('ResponseSet')),
        '400': errorAnswer('An invalid configuration (the message names each bad field), or a body that is not JSON', ['INVALID_RESPONSE_CONFIG', 'INVALID_REQUEST']),
        '404': notFound,
        '503': storeDown('AT_CAPACITY'),
      },
    },
  },
  '/api/endpoints/{id}/extend': {
    parameters: [endpointId],
    post: {
      operationId: 'extendEndpoint',
      summary: 'Extend a kept endpoint\'s lifetime',
      description: 'Every watcher gets `extended`.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      requestBody: readsBody('The new lifetime, from now.', ref('ExtendEndpoint'), true),
      responses: {
        '401': unauthorized,
        '200': json('The new end of life.', ref('Extended')),
        '400': errorAnswer('A bad `ttlMs`, or a live endpoint', ['INVALID_REQUEST']),
        '404': notFound,
        '503': storeDown('AT_CAPACITY'),
      },
    },
  },
};

/** The common methods a receiver captures; it takes every other one Node parses too. */
const CAPTURED_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const satisfies readonly HttpMethod[];

const SOURCE_HEADER: Record<string, Header> = {
  [RESPONSE_SOURCE_HEADER]: {
    description: '`configured` on the answer the endpoint\'s owner configured, `error` on one of Hookwatch\'s own.',
    schema: { type: 'string', enum: ['configured', 'error'] },
  },
};

function receiverPath(kind: EndpointKind, withSubPath: boolean): PathItem {
  const kindName = kind === 'live' ? 'Live' : 'Kept';
  const parameters: Parameter[] = [{ ...endpointId, description: `The ${kind} endpoint's id.` }];
  if (withSubPath) {
    parameters.push({
      name: 'subPath',
      in: 'path',
      required: true,
      description:
        'Any sub-path, slashes included (`github/push`): captured as the record\'s `subPath`, exactly as sent. Its `/` must go as `/`: an encoded `%2F` is captured as written (`/github%2Fpush`), since a sender may mean it. OpenAPI 3.1 cannot mark a path parameter as holding `/` (3.2 does, with `allowReserved`): `x-allow-reserved` says it for tools that read it; with a generated client that encodes it anyway, send to a sub-path with a plain HTTP call (`curl -X POST {base}/api/webhook-tester/{id}/github/push`).',
      'x-allow-reserved': true,
      schema: { type: 'string' },
    });
  }
  const item: PathItem = {
    summary: `Receiver URL of a ${kind} endpoint${withSubPath ? ', with a sub-path' : ''}`,
    description:
      'Captures any request, with any method (every one Node parses but CONNECT, including those OpenAPI cannot name: PROPFIND, QUERY, …), any query, any headers and any body, and answers it with the endpoint\'s response configuration. Every answer carries `Content-Security-Policy: sandbox`, `X-Content-Type-Options: nosniff` and open CORS. See docs/protocol.md (`request`) for the record.',
    parameters,
    'x-hookwatch-any-method': true,
  };
  for (const method of CAPTURED_METHODS) {
    const responses: Record<string, Response> = {
      default: {
        description: 'The configured answer: its status, headers and body (a HEAD answer has no body).',
        headers: SOURCE_HEADER,
        content: { '*/*': { schema: {} } },
      },
      '404': errorAnswer(`No ${kind} endpoint has this id (an answer configured with 404 says \`configured\` in ${RESPONSE_SOURCE_HEADER})`, ['ENDPOINT_NOT_FOUND']),
      '413': errorAnswer('The body passed READ_LIMIT_BYTES: captured truncated, and the connection is closed', ['BODY_TOO_LARGE']),
      '429': errorAnswer('RATE_LIMIT_PER_ENDPOINT or RATE_LIMIT_PER_ADDRESS; not captured', ['RATE_LIMITED'], RETRY_AFTER),
      '503': errorAnswer('Bodies being read hold MAX_READING_BYTES, or the store is unreachable; not captured', ['AT_CAPACITY', 'STORE_UNAVAILABLE']),
    };
    if (method === 'options') {
      responses['204'] = { description: 'A CORS preflight (with Access-Control-Request-Method): captured, and answered so the browser lets the real request through.' };
    }
    item[method] = {
      operationId: `capture${kindName}${method[0]?.toUpperCase()}${method.slice(1)}${withSubPath ? 'SubPath' : ''}`,
      summary: `Capture a ${method.toUpperCase()} request`,
      tags: ['receivers'],
      security: NO_AUTH,
      ...(method === 'post' || method === 'put' || method === 'patch'
        ? {
            requestBody: {
              description: 'Any bytes, read as a stream (a body on any other method is captured too). MAX_BODY_BYTES (KEPT_MAX_BODY_BYTES) of it are kept.',
              required: false,
              content: { '*/*': { schema: {} } },
            },
          }
        : {}),
      responses,
    };
  }
  return item;
}

const receiverPaths: Record<string, PathItem> = Object.fromEntries(
  (['live', 'kept'] as const).flatMap((kind) => [
    [`${RECEIVER_PREFIXES[kind]}{id}`, receiverPath(kind, false)],
    [`${RECEIVER_PREFIXES[kind]}{id}/{subPath}`, receiverPath(kind, true)],
  ]),
);

const otherPaths: Record<string, PathItem> = {
  [LIVE_PATH]: {
    get: {
      operationId: 'openLiveSocket',
      summary: 'The live protocol\'s WebSocket',
      description: `A WebSocket with the subprotocol \`${SUBPROTOCOL}\`, described in docs/protocol.md: JSON text frames to create or join an endpoint and watch its requests arrive. Without an Upgrade it answers 426. A browser may open it only from the page's own origin or ALLOWED_ORIGINS.`,
      tags: ['live'],
      security: NO_AUTH,
      parameters: [
        { name: 'Upgrade', in: 'header', required: true, description: '`websocket`.', schema: { type: 'string', const: 'websocket' } },
        { name: 'Sec-WebSocket-Protocol', in: 'header', required: true, description: `\`${SUBPROTOCOL}\` (without it the socket is closed with 1002).`, schema: { type: 'string' } },
      ],
      responses: {
        '101': { description: `Switching to the WebSocket protocol \`${SUBPROTOCOL}\`.` },
        '403': errorAnswer('A browser on another origin', ['ORIGIN_NOT_ALLOWED']),
        '426': errorAnswer('A plain HTTP request, without an Upgrade', ['UPGRADE_REQUIRED']),
        '429': errorAnswer('Too many live sockets from this address', ['RATE_LIMITED', 'TOO_MANY_SOCKETS'], RETRY_AFTER),
      },
    },
  },
  '/api/access': {
    get: {
      operationId: 'access',
      summary: 'How this instance decides who may create and watch',
      description: '`mode` is ACCESS_MODE; `user` the signed-in caller (from `X-Hookwatch-Token` or the sign-in proxy), null when none. The same for an unknown and a wrong token.',
      tags: ['operations'],
      security: NO_AUTH,
      responses: {
        '200': json('The mode and the caller (Cache-Control: no-store).', {
          type: 'object',
          properties: { mode: { type: 'string', enum: ['open', 'token', 'proxy'] }, user: { type: ['string', 'null'] } },
          required: ['mode', 'user'],
        }),
      },
    },
  },
  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'The process answers',
      tags: ['operations'],
      security: NO_AUTH,
      responses: { '200': json('Alive.', ref('Health')) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'The process answers and can reach its store',
      tags: ['operations'],
      security: NO_AUTH,
      responses: { '200': json('Ready.', ref('Readiness')), '503': json('The store is unreachable.', ref('Readiness')) },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics of this instance',
      description: 'The Prometheus text format; the metrics are listed in the README (Operations).',
      tags: ['operations'],
      security: NO_AUTH,
      responses: { '200': { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
  [OPENAPI_PATH]: {
    get: {
      operationId: 'openApi',
      summary: 'This document',
      tags: ['operations'],
      security: NO_AUTH,
      responses: { '200': json('The OpenAPI 3.1 description of the HTTP API (Cache-Control: no-cache).', { type: 'object' }) },
    },
  },
  '/': {
    get: {
      operationId: 'page',
      summary: 'The page',
      description: 'The web page that creates an endpoint and shows its requests live (its scripts and styles are served beside it). 503 when it is not built.',
      tags: ['operations'],
      security: NO_AUTH,
      responses: {
        '200': { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
        '503': { description: 'The page is not built (`npm run build:client`).', content: { 'text/plain': { schema: { type: 'string' } } } },
      },
    },
  },
};

export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.1',
  info: {
    title: 'Hookwatch',
    version,
    summary: 'A self-hostable temporary webhook receiver.',
    description:
      'Capture any HTTP request on a receiver URL and watch it arrive live. The endpoints API creates, polls, configures, clears and deletes endpoints; every call on an endpoint takes its watch key as a bearer token. Errors are `{"error":{"code","message"}}` with the codes of docs/errors.md, which also lists those any request may get (408, 429 TOO_MANY_CONNECTIONS, 431). The live WebSocket protocol is in docs/protocol.md.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
  tags: [
    { name: 'endpoints', description: 'Create, poll, configure, clear and delete endpoints.' },
    { name: 'receivers', description: 'The URLs senders call: every request is captured.' },
    { name: 'live', description: 'The WebSocket of the live protocol.' },
    { name: 'operations', description: 'Health, readiness, metrics, the page and this document.' },
  ],
  paths: { ...endpointsPaths, ...receiverPaths, ...otherPaths },
  components: {
    schemas,
    securitySchemes: {
      watchKey: { type: 'http', scheme: 'bearer', description: 'The endpoint\'s watch key (`key` when it was created). Never read from a query string.' },
    },
  },
};
