import { createRequire } from 'node:module';
import { z } from 'zod';
import { errors, type ErrorCode } from '../errors.js';
import { LIVE_PATH, MAX_AFTER_SEQ, RECEIVER_PREFIXES, SUBPROTOCOL } from '../shared/protocol.js';
import { capturedRequestSchema, multipartPartSchema, paramMapSchema } from '../shared/schemas/captured-request.js';
import { endpointInfoSchema } from '../shared/schemas/endpoint-info.js';
import {
  accessSchema,
  clearedSchema,
  createEndpointSchema,
  errorBodyOf,
  extendedSchema,
  extendEndpointSchema,
  healthSchema,
  MAX_WAIT_MS,
  ownEndpointsSchema,
  pollAnswerSchema,
  readinessSchema,
  responseSetSchema,
} from '../shared/schemas/endpoints-api.js';
import { forwardedMessageSchema } from '../shared/schemas/live-messages.js';
import { answerRuleSchema, responseConfigSchema, responseHeaderSchema } from '../shared/schemas/response-config.js';
import type { EndpointKind } from '../store/store.js';
import { RESPONSE_SOURCE_HEADER } from '../answers/receiver-headers.js';

/**
 * The OpenAPI 3.1 description of the HTTP API, served at OPENAPI_PATH (openapi-route.ts). Its
 * paths and operations are written here; its schemas are generated from the zod schemas of
 * src/shared/schemas, which also give the types and validate what the server takes.
 * test/integration/openapi.test.ts keeps it in step with the registered routes and checks a
 * real answer against it. `servers` is left out: the base URL is PUBLIC_URL or the request's
 * own, so clients resolve paths against wherever they fetched this document.
 */
export const OPENAPI_PATH = '/api/openapi.json';

/** Read once at start: `../../package.json` is the package root from src/http and dist/http alike. */
const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

// ---- the subset of OpenAPI 3.1 this document uses ----

export type JsonSchema = z.core.JSONSchema.JSONSchema;

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

export type PathItem = { summary?: string; description?: string; parameters?: Parameter[] } & {
  [M in HttpMethod]?: Operation;
} & {
  /**
   * The route takes every method Node parses (receiver-route.ts), more than OpenAPI can name: the
   * common ones are described, and the test accepts any other method on such a path.
   */
  'x-hookwatch-any-method'?: true;
};

export interface OpenApiDocument {
  openapi: '3.1.1';
  info: {
    title: string;
    version: string;
    summary: string;
    description: string;
    license: { name: string; identifier: string };
  };
  jsonSchemaDialect: string;
  tags: Array<{ name: Tag; description: string }>;
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<SchemaName, JsonSchema>;
    securitySchemes: Record<'watchKey', { type: 'http'; scheme: 'bearer'; description: string }>;
  };
}

type Tag = 'endpoints' | 'receivers' | 'live' | 'operations';

// ---- helpers ----

const ref = (name: SchemaName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const json = (description: string, schema: JsonSchema, headers?: Record<string, Header>): Response => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const RETRY_AFTER: Record<string, Header> = {
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
};

/** An error answer (docs/errors.md) that may carry only the given codes. */
function errorAnswer(description: string, codes: readonly ErrorCode[], headers?: Record<string, Header>): Response {
  const schema: JsonSchema = {
    allOf: [
      ref('Error'),
      { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: [...codes] } } } } },
    ],
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

const notFound = errorAnswer(
  'Unknown or expired endpoint, or a wrong or missing watch key: the same answer, so nobody learns anything about ids',
  ['ENDPOINT_NOT_FOUND'],
);
/** Every endpoints-API call on a private instance (ACCESS_MODE token or proxy) without a signed-in user. */
const unauthorized = errorAnswer(
  'ACCESS_MODE token or proxy: no valid X-Hookwatch-Token, or no user from the sign-in proxy (TRUST_PROXY)',
  ['UNAUTHORIZED'],
);
const storeDown = (...also: ErrorCode[]) =>
  errorAnswer('The store is unreachable, or the service is at capacity', [...also, 'STORE_UNAVAILABLE']);
const readsBody = (description: string, schema: JsonSchema, required: boolean): Operation['requestBody'] => ({
  description: `${description} Read as JSON whatever its Content-Type.`,
  required,
  content: { 'application/json': { schema } },
});

// ---- schemas ----

const errorCode = z
  .enum(Object.keys(errors) as [ErrorCode, ...ErrorCode[]])
  .describe('A stable error code (docs/errors.md).');

/** The document's named schemas, as answers carry them (fields with a default are always there). */
const answerSchemas = {
  ErrorCode: errorCode,
  Error: errorBodyOf(errorCode),
  ResponseConfig: responseConfigSchema,
  ResponseHeader: responseHeaderSchema,
  AnswerRule: answerRuleSchema,
  EndpointInfo: endpointInfoSchema,
  Extended: extendedSchema,
  ResponseSet: responseSetSchema,
  Cleared: clearedSchema,
  ParamMap: paramMapSchema,
  MultipartPart: multipartPartSchema,
  CapturedRequest: capturedRequestSchema,
  ForwardedMessage: forwardedMessageSchema,
  PollAnswer: pollAnswerSchema,
  OwnEndpoints: ownEndpointsSchema,
  Access: accessSchema,
  Health: healthSchema,
  Readiness: readinessSchema,
};

/** The request bodies, as a client may send them: a field with a default may be left out. */
const requestBodySchemas = {
  CreateEndpoint: createEndpointSchema,
  ExtendEndpoint: extendEndpointSchema,
  ResponseConfigInput: responseConfigSchema.describe(
    'A response configuration to set: every field but `status` may be left out for its default.',
  ),
};

type SchemaName = keyof typeof answerSchemas | keyof typeof requestBodySchemas;

/**
 * JSON Schemas of `named` (the input or output side of each), referring to each other and to
 * `referable` by `#/components/schemas/<name>`.
 */
function toJsonSchemas(
  named: Record<string, z.ZodType>,
  io: 'input' | 'output',
  referable: Record<string, z.ZodType> = {},
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries({ ...referable, ...named })) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    uri: (id) => `#/components/schemas/${id}`,
    override: dropSafeIntegerBounds,
  });
  return Object.fromEntries(
    Object.keys(named).map((id) => {
      const { $schema: _dialect, $id: _id, ...schema } = schemas[id] as JsonSchema;
      return [id, schema];
    }),
  );
}

/** zod bounds every integer to the safe ones; said only where a schema sets a bound of its own. */
function dropSafeIntegerBounds({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}

const schemas: Record<SchemaName, JsonSchema> = {
  ...toJsonSchemas(answerSchemas, 'output'),
  // Their rules and headers refer to the answers' schemas, the same on both sides.
  ...toJsonSchemas(requestBodySchemas, 'input', { ResponseHeader: responseHeaderSchema, AnswerRule: answerRuleSchema }),
} as Record<SchemaName, JsonSchema>;

// ---- paths ----

const endpointsPaths: Record<string, PathItem> = {
  '/api/endpoints': {
    get: {
      operationId: 'listOwnEndpoints',
      summary: "A signed-in user's own endpoints",
      description:
        "ACCESS_MODE token or proxy: the living endpoints the caller created, oldest first (at most 500), without their keys: their creator opens them without one. Every call of this API takes, in those modes, the access token as `X-Hookwatch-Token` (token) or the sign-in proxy's user header (proxy), else 401 UNAUTHORIZED. In open mode: 400.",
      tags: ['endpoints'],
      security: NO_AUTH,
      responses: {
        '200': json('The caller and their endpoints (Cache-Control: no-store).', ref('OwnEndpoints')),
        '400': errorAnswer('This instance has no users (ACCESS_MODE=open)', ['INVALID_REQUEST']),
        '401': errorAnswer('Not signed in: no valid access token, or no user from the sign-in proxy', ['UNAUTHORIZED']),
        '503': storeDown(),
      },
    },
    post: {
      operationId: 'createEndpoint',
      summary: 'Create an endpoint',
      description:
        "Makes a live endpoint (watch it on the socket or by polling, or it is gone after the grace) or a kept one. At most KEPT_CREATES_PER_ADDRESS kept endpoints per window per address (shared with the socket's `create`), MAX_KEPT_ENDPOINTS in all.",
      tags: ['endpoints'],
      security: NO_AUTH,
      requestBody: readsBody("The creator's choices; none for a live endpoint.", ref('CreateEndpoint'), false),
      responses: {
        '401': unauthorized,
        '201': json('The new endpoint with its watch key (Cache-Control: no-store).', ref('EndpointInfo')),
        '400': errorAnswer('A body that is not the JSON this call takes, or a choice this server refuses', [
          'INVALID_REQUEST',
        ]),
        '409': errorAnswer('A living endpoint already has this name', ['NAME_TAKEN']),
        '429': errorAnswer(
          'Too many new endpoints from this address (from this user, when signed in), or the signed-in user holds MAX_KEPT_PER_USER kept endpoints',
          ['RATE_LIMITED', 'TOO_MANY_KEPT'],
          RETRY_AFTER,
        ),
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
    parameters: [
      endpointId,
      {
        name: 'seq',
        in: 'path',
        required: true,
        description: "The stored request's seq.",
        schema: { type: 'integer', minimum: 1 },
      },
    ],
    delete: {
      operationId: 'deleteRequest',
      summary: 'Delete one captured request',
      description:
        'Deletes the stored request with its forward result; every watcher gets `removed`. Its seq is never given again.',
      tags: ['endpoints'],
      security: WATCH_KEY,
      responses: {
        '401': unauthorized,
        '204': { description: 'Deleted.' },
        '400': errorAnswer('A seq that is not a whole number of at least 1', ['INVALID_REQUEST']),
        '404': errorAnswer('No such endpoint (as for every call), or that request is not stored', [
          'ENDPOINT_NOT_FOUND',
          'REQUEST_NOT_FOUND',
        ]),
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
        '400': errorAnswer('An invalid configuration (the message names each bad field), or a body that is not JSON', [
          'INVALID_RESPONSE_CONFIG',
          'INVALID_REQUEST',
        ]),
        '404': notFound,
        '503': storeDown('AT_CAPACITY'),
      },
    },
  },
  '/api/endpoints/{id}/extend': {
    parameters: [endpointId],
    post: {
      operationId: 'extendEndpoint',
      summary: "Extend a kept endpoint's lifetime",
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
const CAPTURED_METHODS = [
  'get',
  'post',
  'put',
  'patch',
  'delete',
  'head',
  'options',
] as const satisfies readonly HttpMethod[];

const SOURCE_HEADER: Record<string, Header> = {
  [RESPONSE_SOURCE_HEADER]: {
    description: "`configured` on the answer the endpoint's owner configured, `error` on one of Hookwatch's own.",
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
        "Any sub-path, slashes included (`github/push`): captured as the record's `subPath`, exactly as sent. Its `/` must go as `/`: an encoded `%2F` is captured as written (`/github%2Fpush`), since a sender may mean it. OpenAPI 3.1 cannot mark a path parameter as holding `/` (3.2 does, with `allowReserved`): `x-allow-reserved` says it for tools that read it; with a generated client that encodes it anyway, send to a sub-path with a plain HTTP call (`curl -X POST {base}/api/webhook-tester/{id}/github/push`).",
      'x-allow-reserved': true,
      schema: { type: 'string' },
    });
  }
  const item: PathItem = {
    summary: `Receiver URL of a ${kind} endpoint${withSubPath ? ', with a sub-path' : ''}`,
    description:
      "Captures any request, with any method (every one Node parses but CONNECT, including those OpenAPI cannot name: PROPFIND, QUERY, …), any query, any headers and any body, and answers it with the endpoint's response configuration. Every answer carries `Content-Security-Policy: sandbox`, `X-Content-Type-Options: nosniff` and open CORS. See docs/protocol.md (`request`) for the record.",
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
      '404': errorAnswer(
        `No ${kind} endpoint has this id (an answer configured with 404 says \`configured\` in ${RESPONSE_SOURCE_HEADER})`,
        ['ENDPOINT_NOT_FOUND'],
      ),
      '413': errorAnswer('The body passed READ_LIMIT_BYTES: captured truncated, and the connection is closed', [
        'BODY_TOO_LARGE',
      ]),
      '429': errorAnswer(
        'RATE_LIMIT_PER_ENDPOINT or RATE_LIMIT_PER_ADDRESS; not captured',
        ['RATE_LIMITED'],
        RETRY_AFTER,
      ),
      '503': errorAnswer('Bodies being read hold MAX_READING_BYTES, or the store is unreachable; not captured', [
        'AT_CAPACITY',
        'STORE_UNAVAILABLE',
      ]),
    };
    if (method === 'options') {
      responses['204'] = {
        description:
          'A CORS preflight (with Access-Control-Request-Method): captured, and answered so the browser lets the real request through.',
      };
    }
    item[method] = {
      operationId: `capture${kindName}${method[0]?.toUpperCase()}${method.slice(1)}${withSubPath ? 'SubPath' : ''}`,
      summary: `Capture a ${method.toUpperCase()} request`,
      tags: ['receivers'],
      security: NO_AUTH,
      ...(method === 'post' || method === 'put' || method === 'patch'
        ? {
            requestBody: {
              description:
                'Any bytes, read as a stream (a body on any other method is captured too). MAX_BODY_BYTES (KEPT_MAX_BODY_BYTES) of it are kept.',
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
      summary: "The live protocol's WebSocket",
      description: `A WebSocket with the subprotocol \`${SUBPROTOCOL}\`, described in docs/protocol.md: JSON text frames to create or join an endpoint and watch its requests arrive. Without an Upgrade it answers 426. A browser may open it only from the page's own origin or ALLOWED_ORIGINS.`,
      tags: ['live'],
      security: NO_AUTH,
      parameters: [
        {
          name: 'Upgrade',
          in: 'header',
          required: true,
          description: '`websocket`.',
          schema: { type: 'string', const: 'websocket' },
        },
        {
          name: 'Sec-WebSocket-Protocol',
          in: 'header',
          required: true,
          description: `\`${SUBPROTOCOL}\` (without it the socket is closed with 1002).`,
          schema: { type: 'string' },
        },
      ],
      responses: {
        '101': { description: `Switching to the WebSocket protocol \`${SUBPROTOCOL}\`.` },
        '403': errorAnswer('A browser on another origin', ['ORIGIN_NOT_ALLOWED']),
        '426': errorAnswer('A plain HTTP request, without an Upgrade', ['UPGRADE_REQUIRED']),
        '429': errorAnswer(
          'Too many live sockets from this address',
          ['RATE_LIMITED', 'TOO_MANY_SOCKETS'],
          RETRY_AFTER,
        ),
      },
    },
  },
  '/api/access': {
    get: {
      operationId: 'access',
      summary: 'How this instance decides who may create and watch',
      description:
        '`mode` is ACCESS_MODE; `user` the signed-in caller (from `X-Hookwatch-Token` or the sign-in proxy), null when none. The same for an unknown and a wrong token.',
      tags: ['operations'],
      security: NO_AUTH,
      responses: {
        '200': json('The mode and the caller (Cache-Control: no-store).', ref('Access')),
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
      responses: {
        '200': json('Ready.', ref('Readiness')),
        '503': json('The store is unreachable.', ref('Readiness')),
      },
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
      responses: {
        '200': json('The OpenAPI 3.1 description of the HTTP API (Cache-Control: no-cache).', { type: 'object' }),
      },
    },
  },
  '/': {
    get: {
      operationId: 'page',
      summary: 'The page',
      description:
        'The web page that creates an endpoint and shows its requests live (its scripts and styles are served beside it). 503 when it is not built.',
      tags: ['operations'],
      security: NO_AUTH,
      responses: {
        '200': { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
        '503': {
          description: 'The page is not built (`npm run build:client`).',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
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
      watchKey: {
        type: 'http',
        scheme: 'bearer',
        description: "The endpoint's watch key (`key` when it was created). Never read from a query string.",
      },
    },
  },
};
