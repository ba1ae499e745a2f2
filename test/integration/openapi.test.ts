import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RECEIVER_METHODS } from '../../src/http/methods.js';
import {
  HTTP_METHODS,
  OPENAPI_PATH,
  openApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type PathItem,
} from '../../src/http/openapi.js';
import type { EndpointInfo } from '../../src/shared/protocol.js';
import {
  answerRuleSchema,
  parseResponseConfig,
  responseHeaderSchema,
} from '../../src/shared/schemas/response-config.js';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

// ajv-formats is CommonJS: its function is the default export's `default`.
const { default: addFormats } = addFormatsModule;

interface RegisteredRoute {
  method: string;
  url: string;
  /** `schema.hide`: left out of API descriptions by convention (the page's static files). */
  hidden: boolean;
}

/** Fastify's `/api/x/:id/*` as an OpenAPI path: `/api/x/{id}/{subPath}`. */
const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{subPath}');
const toFastifyUrl = (path: string) => path.replace(/\{subPath\}$/, '*').replace(/\{(\w+)\}/g, ':$1');

/**
 * Starts a server while collecting every route it registers: Fastify publishes each new
 * instance on the `fastify.initialization` channel before any plugin or route is added, which
 * is the moment an onRoute hook sees them all.
 */
async function startCollecting(): Promise<{ server: TestServer; routes: RegisteredRoute[] }> {
  const routes: RegisteredRoute[] = [];
  const onInitialization = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRoute', (route: RouteOptions) => {
      const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true;
      for (const method of [route.method].flat()) routes.push({ method, url: route.url, hidden });
    });
  };
  subscribe('fastify.initialization', onInitialization);
  try {
    return { server: await startServer({ logLevel: 'warn' }), routes };
  } finally {
    unsubscribe('fastify.initialization', onInitialization);
  }
}

const operationsOf = (item: PathItem) => HTTP_METHODS.filter((method) => item[method] !== undefined);

/**
 * Compiles a schema of the document with strict JSON Schema 2020-12 (ajv), its
 * `#/components/...` references resolved against the document's components.
 */
function schemaCompiler(document: OpenApiDocument): (schema: JsonSchema) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  // Carries the components the references point into; not a keyword of its own.
  ajv.addKeyword({ keyword: 'components' });
  // The receivers' operations repeat the same answers: each distinct schema is compiled once.
  const compiled = new Map<string, ValidateFunction>();
  return (schema) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile({ ...schema, components: document.components })));
    return validate;
  };
}

describe('the OpenAPI document', () => {
  let s: TestServer;
  let routes: RegisteredRoute[];
  /** The document as served (and as JSON: what clients see). */
  let served: OpenApiDocument;
  let compile: (schema: JsonSchema) => ValidateFunction;

  beforeAll(async () => {
    ({ server: s, routes } = await startCollecting());
    const answer = await send(`${s.baseUrl}${OPENAPI_PATH}`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-cache');
    served = JSON.parse(answer.text) as OpenApiDocument;
    compile = schemaCompiler(served);
  });
  afterAll(async () => s?.close());

  /** The schema of an operation's answer with this status (application/json). */
  function answerSchema(path: string, method: (typeof HTTP_METHODS)[number], status: string): ValidateFunction {
    const schema = served.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`no JSON answer ${status} for ${method} ${path}`);
    return compile(schema);
  }
  const expectValid = (validate: ValidateFunction, value: unknown) => {
    validate(value);
    expect(validate.errors ?? []).toEqual([]);
  };

  it('is served at /api/openapi.json, with the package version and no servers', async () => {
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument)));
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    expect(served.info.version).toBe(pkg.version);
    expect(served).not.toHaveProperty('servers');
  });

  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(served as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every route, and only routes that exist', () => {
    const visible = routes.filter((route) => !route.hidden);
    expect(visible.length).toBeGreaterThan(20);
    const registered = new Set(routes.map((route) => `${route.method} ${toOpenApiPath(route.url)}`));

    // Documented -> registered, by the collected routes and by Fastify's own lookup.
    const missing: string[] = [];
    for (const [path, item] of Object.entries(served.paths)) {
      for (const method of operationsOf(item)) {
        const upper = method.toUpperCase();
        if (!registered.has(`${upper} ${path}`) || !s.app.hasRoute({ method: upper, url: toFastifyUrl(path) }))
          missing.push(`${upper} ${path}`);
      }
    }

    // Registered -> documented: the operation itself, a HEAD that Fastify adds beside every GET,
    // or any method on a path that takes every method (the receivers).
    const undocumented: string[] = [];
    for (const route of visible) {
      const path = toOpenApiPath(route.url);
      const item = served.paths[path];
      const method = route.method.toLowerCase() as (typeof HTTP_METHODS)[number];
      if (item?.[method] !== undefined) continue;
      if (method === 'head' && item?.get !== undefined) continue;
      if (item?.['x-hookwatch-any-method'] === true && RECEIVER_METHODS.includes(route.method)) continue;
      undocumented.push(`${route.method} ${path}`);
    }
    expect({ missing, undocumented }).toEqual({ missing: [], undocumented: [] });

    // A path said to take any method does take every one.
    const anyMethodPaths = Object.entries(served.paths).filter(([, item]) => item['x-hookwatch-any-method'] === true);
    expect(anyMethodPaths.map(([path]) => path)).toEqual([
      '/api/webhook-tester/{id}',
      '/api/webhook-tester/{id}/{subPath}',
      '/api/webhook-endpoint/{id}',
      '/api/webhook-endpoint/{id}/{subPath}',
    ]);
    for (const [path] of anyMethodPaths) {
      const methods = visible.filter((route) => toOpenApiPath(route.url) === path).map((route) => route.method);
      expect(new Set(methods), path).toEqual(new Set(RECEIVER_METHODS));
    }
  });

  it('has schemas that compile as strict JSON Schema 2020-12', () => {
    for (const name of Object.keys(served.components.schemas)) compile({ $ref: `#/components/schemas/${name}` });
    let count = 0;
    const walk = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'schema') {
          compile(value as JsonSchema);
          count++;
        } else walk(value);
      }
    };
    walk(served.paths);
    expect(count).toBeGreaterThan(50);
  });

  it('describes the response configuration as response-config.ts checks it (bar the denied header names)', () => {
    const validate = compile({ $ref: '#/components/schemas/ResponseConfigInput' });
    const samples: unknown[] = [
      { status: 200 },
      { status: 199 },
      { status: 299, body: 'x', contentType: 'text/plain', headers: [['X-Ok', 'tab\there']], delayMs: 30_000 },
      { status: 300 },
      { status: 404.5 },
      { status: 599 },
      { status: 600 },
      { status: 200, delayMs: -1 },
      { status: 200, delayMs: 30_001 },
      { status: 200, contentType: 'text/html' },
      { status: 200, extra: true },
      { status: 200, body: 'b'.repeat(65_537) },
      { status: 200, headers: [['x'.repeat(64), 'a'.repeat(1024)]] },
      { status: 200, headers: [['x'.repeat(65), 'v']] },
      { status: 200, headers: [['X Bad', 'v']] },
      { status: 200, headers: [['X-Ok', 'a'.repeat(1025)]] },
      { status: 200, headers: [['X-Ok', 'line\nbreak']] },
      { status: 200, headers: [['X-Ok', 'café']] },
      { status: 200, headers: [['X-Ok']] },
      { status: 200, headers: Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v']) },
    ];
    for (const sample of samples) expect([sample, validate(sample)]).toEqual([sample, parseResponseConfig(sample).ok]);
  });

  it('refers request bodies to the rules and headers of the answers, which are the same taken and given', () => {
    // The document holds one AnswerRule and one ResponseHeader, generated from the answers' side.
    for (const schema of [answerRuleSchema, responseHeaderSchema])
      expect(z.toJSONSchema(schema, { io: 'input' })).toEqual(z.toJSONSchema(schema, { io: 'output' }));
    expect(JSON.stringify(served.components.schemas.ResponseConfigInput)).toContain(
      '"#/components/schemas/AnswerRule"',
    );
  });

  it("matches the server's real answers: a created kept endpoint, a poll of its captures, an error", async () => {
    const created = await send(`${s.baseUrl}/api/endpoints`, {
      method: 'POST',
      body: '{"kind":"kept","ttlMs":600000}',
    });
    expect(created.status).toBe(201);
    const endpoint = JSON.parse(created.text) as EndpointInfo;
    expectValid(answerSchema('/api/endpoints', 'post', '201'), endpoint);

    const boundary = 'b0undary';
    const multipart =
      `--${boundary}\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile bytes\r\n--${boundary}--\r\n`;
    const captures = [
      {
        path: '/github/push?a=1&a=2&token=s3cret',
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret' },
        body: '{"event":"push"}',
      },
      {
        path: '',
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'x=1&x=2&y=3',
      },
      {
        path: '/upload',
        method: 'PATCH',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: multipart,
      },
      { path: '/binary', method: 'PROPFIND', headers: {}, body: Buffer.from([0xff, 0x00, 0xfe]) },
    ];
    for (const capture of captures) {
      const answer = await send(`${endpoint.url}${capture.path}`, {
        method: capture.method,
        headers: capture.headers,
        body: capture.body,
      });
      expect(answer.status).toBe(200);
    }

    const polled = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests?afterSeq=0&waitMs=1000`, {
      headers: { authorization: `Bearer ${endpoint.key}` },
    });
    expect(polled.status).toBe(200);
    const answer = JSON.parse(polled.text) as { requests: Array<Record<string, unknown>> };
    expect(answer.requests.map((request) => request.method)).toEqual(['POST', 'PUT', 'PATCH', 'PROPFIND']);
    // The optional and nullable parts were exercised.
    expect(answer.requests[0]).toHaveProperty('redacted');
    expect(answer.requests[0]).toHaveProperty('redactedQuery');
    expect(answer.requests[1]?.form).not.toBeNull();
    expect(answer.requests[2]?.parts).not.toBeNull();
    expect(answer.requests[3]?.bodyEncoding).toBe('base64');
    expectValid(answerSchema('/api/endpoints/{id}/requests', 'get', '200'), answer);

    const wrongKey = await send(`${s.baseUrl}/api/endpoints/${endpoint.id}/requests`, {
      headers: { authorization: 'Bearer wrong' },
    });
    expect(wrongKey.status).toBe(404);
    expectValid(answerSchema('/api/endpoints/{id}/requests', 'get', '404'), JSON.parse(wrongKey.text));

    // The schemas are not vacuous: a record missing a field, or an error with another code, fails.
    const poll = answerSchema('/api/endpoints/{id}/requests', 'get', '200');
    const withoutSeq = { ...answer, requests: answer.requests.map(({ seq: _seq, ...rest }) => rest) };
    expect(poll(withoutSeq)).toBe(false);
    expect(
      answerSchema('/api/endpoints/{id}/requests', 'get', '404')({ error: { code: 'NAME_TAKEN', message: 'x' } }),
    ).toBe(false);
  });
});
