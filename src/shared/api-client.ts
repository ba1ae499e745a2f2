/**
 * The endpoints API's client (docs/protocol.md, "The endpoints API"), one for the page and the
 * CLI: fetch only, so it runs in browsers and on Node 20 alike. The bodies' types come from
 * schemas/endpoints-api.ts as types only, so zod stays out of the page's bundle: answers are
 * trusted as the server's, bar a check that a poll answer is one.
 */
import type { EndpointInfo } from './schemas/endpoint-info.js';
import type {
  AccessAnswer,
  CreateEndpoint,
  ErrorBody,
  OwnEndpointsAnswer,
  PollAnswer,
} from './schemas/endpoints-api.js';
import type { ResponseConfig } from './schemas/response-config.js';

/** Where and as whom a call goes. */
export interface ApiContext {
  /** `https://host`; '' for the page's own origin. */
  origin: string;
  /** ACCESS_MODE=token: sent as X-Hookwatch-Token, never in a URL. */
  accessToken?: string | undefined;
  /** Ends the call: the caller's deadline, or its stop. */
  signal?: AbortSignal | undefined;
  /** Told every status the server answers with (the page signs out on a 401). */
  onStatus?: ((status: number) => void) | undefined;
}

/** An endpoint a call acts on: its id, and its watch key (none: its signed-in creator's call). */
export interface EndpointRef {
  id: string;
  key?: string | undefined;
}

export type ApiError = ErrorBody['error'];

/**
 * How a call went: its value when the server did what was asked; else its status with the
 * error the server gave, if it gave one of ours. Status 0: no answer at all, `cause` says why
 * (the connection failed, or `signal` ended the call).
 */
export type ApiAnswer<T> = { ok: true; status: number; value: T } | ApiRefusal;

export interface ApiRefusal {
  ok: false;
  status: number;
  error?: ApiError;
  /** Retry-After, when the server asked to wait. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** `POST /api/endpoints`: a new endpoint with its watch key. */
export const createEndpoint = (context: ApiContext, choices: CreateEndpoint): Promise<ApiAnswer<EndpointInfo>> =>
  call(context, 'POST', '/api/endpoints', { body: choices, expect: 201 });

/** `GET /api/endpoints/<id>/requests`: the stored requests after `afterSeq`; with `waitMs`, a long poll. */
export async function pollRequests(
  context: ApiContext,
  endpoint: EndpointRef,
  afterSeq: number,
  waitMs?: number,
): Promise<ApiAnswer<PollAnswer>> {
  const query = `afterSeq=${afterSeq}${waitMs === undefined ? '' : `&waitMs=${waitMs}`}`;
  const answer = await call<PollAnswer>(context, 'GET', `${endpointPath(endpoint)}/requests?${query}`, {
    key: endpoint.key,
    expect: 200,
  });
  // Anything else on that URL (another server, a proxy's page) is not taken for an empty log.
  if (answer.ok && !isPollAnswer(answer.value)) return { ok: false, status: answer.status };
  return answer;
}

/** `POST /api/endpoints/<id>/extend`: a kept endpoint lives `ttlMs` from now. */
export const extendEndpoint = (
  context: ApiContext,
  endpoint: EndpointRef,
  ttlMs: number,
): Promise<ApiAnswer<{ expiresAt: string }>> =>
  call(context, 'POST', `${endpointPath(endpoint)}/extend`, { key: endpoint.key, body: { ttlMs }, expect: 200 });

/** `PUT /api/endpoints/<id>/response`: the configuration now in force. */
export const setResponse = (
  context: ApiContext,
  endpoint: EndpointRef,
  response: ResponseConfig,
): Promise<ApiAnswer<{ response: ResponseConfig }>> =>
  call(context, 'PUT', `${endpointPath(endpoint)}/response`, { key: endpoint.key, body: response, expect: 200 });

/** `DELETE /api/endpoints/<id>/requests`: the new clearedSeq. */
export const clearRequests = (context: ApiContext, endpoint: EndpointRef): Promise<ApiAnswer<{ clearedSeq: number }>> =>
  call(context, 'DELETE', `${endpointPath(endpoint)}/requests`, { key: endpoint.key, expect: 200 });

/** `DELETE /api/endpoints/<id>/requests/<seq>`. */
export const deleteRequest = (context: ApiContext, endpoint: EndpointRef, seq: number): Promise<ApiAnswer<undefined>> =>
  call(context, 'DELETE', `${endpointPath(endpoint)}/requests/${seq}`, { key: endpoint.key, expect: 204 });

/** `DELETE /api/endpoints/<id>`. */
export const deleteEndpoint = (context: ApiContext, endpoint: EndpointRef): Promise<ApiAnswer<undefined>> =>
  call(context, 'DELETE', endpointPath(endpoint), { key: endpoint.key, expect: 204 });

/** `GET /api/endpoints`: a signed-in user's own living endpoints. */
export const listOwnEndpoints = (context: ApiContext): Promise<ApiAnswer<OwnEndpointsAnswer>> =>
  call(context, 'GET', '/api/endpoints', { expect: 200 });

/** `GET /api/access`: the instance's ACCESS_MODE, and whom `context.accessToken` signs in. */
export const readAccess = (context: ApiContext): Promise<ApiAnswer<AccessAnswer>> =>
  call(context, 'GET', '/api/access', { expect: 200 });

const endpointPath = (endpoint: EndpointRef) => `/api/endpoints/${encodeURIComponent(endpoint.id)}`;

interface CallOptions {
  /** The watch key: in the Authorization header only, never in the URL. */
  key?: string | undefined;
  body?: unknown;
  /** The status of success. */
  expect: number;
}

async function call<T>(context: ApiContext, method: string, path: string, options: CallOptions): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (context.accessToken !== undefined) headers['x-hookwatch-token'] = context.accessToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let text: string;
  try {
    // No `cache` option (Node's fetch types lack it): the server marks each GET answered here no-store itself.
    response = await fetch(`${context.origin}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    text = await response.text();
  } catch (error) {
    // fetch's own `cause` says what failed (`connect ECONNREFUSED …`), where its message says only `fetch failed`.
    return { ok: false, status: 0, cause: (error as { cause?: unknown } | undefined)?.cause ?? error };
  }
  context.onStatus?.(response.status);
  const body = parseJson(text);
  if (response.status === options.expect) return { ok: true, status: response.status, value: body as T };
  const retryAfter = Number(response.headers.get('retry-after'));
  return {
    ok: false,
    status: response.status,
    ...(isErrorBody(body) ? { error: body.error } : {}),
    ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
  };
}

/** The JSON of a body, or undefined when there is none (a 204) or it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

function isPollAnswer(body: unknown): body is PollAnswer {
  const answer = body as Partial<PollAnswer> | undefined;
  return typeof answer?.lastSeq === 'number' && Array.isArray(answer.requests);
}
