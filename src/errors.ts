import createError from '@fastify/error';

/**
 * Every error the service itself can raise, with its stable code and HTTP status. Routes and
 * the live protocol throw or send them; one error handler turns them into
 * `{"error":{"code","message"}}`. docs/errors.md lists each (a test keeps the two in step).
 */
export const errors = {
  ENDPOINT_NOT_FOUND: createError(
    'ENDPOINT_NOT_FOUND',
    'No endpoint has this id: it never existed, or it expired',
    404,
    undefined,
    false,
  ),
  REQUEST_NOT_FOUND: createError<'REQUEST_NOT_FOUND', 404, [number]>(
    'REQUEST_NOT_FOUND',
    'Request #%s is not stored: it was deleted, cleared, or trimmed to make room for newer ones',
    404,
    undefined,
    false,
  ),
  INVALID_RESPONSE_CONFIG: createError<'INVALID_RESPONSE_CONFIG', 400, [string]>(
    'INVALID_RESPONSE_CONFIG',
    'Invalid response configuration: %s',
    400,
    undefined,
    false,
  ),
  BODY_TOO_LARGE: createError<'BODY_TOO_LARGE', 413, [number]>(
    'BODY_TOO_LARGE',
    'Request body is larger than the read limit of %s bytes; it was captured truncated',
    413,
    undefined,
    false,
  ),
  INVALID_REQUEST: createError<'INVALID_REQUEST', 400, [string]>(
    'INVALID_REQUEST',
    'Invalid request: %s',
    400,
    undefined,
    false,
  ),
  AT_CAPACITY: createError<'AT_CAPACITY', 503, [string]>(
    'AT_CAPACITY',
    'The service is at capacity: %s',
    503,
    undefined,
    false,
  ),
  RATE_LIMITED: createError<'RATE_LIMITED', 429, [string, string]>(
    'RATE_LIMITED',
    'Too many requests %s; retry in %s',
    429,
    undefined,
    false,
  ),
  TOO_MANY_CONNECTIONS: createError<'TOO_MANY_CONNECTIONS', 429, [number]>(
    'TOO_MANY_CONNECTIONS',
    'This client address already has %s open connections',
    429,
    undefined,
    false,
  ),
  TOO_MANY_SOCKETS: createError<'TOO_MANY_SOCKETS', 429, [number]>(
    'TOO_MANY_SOCKETS',
    'This client address already has %s open live sockets',
    429,
    undefined,
    false,
  ),
  HEADERS_TOO_LARGE: createError<'HEADERS_TOO_LARGE', 431, [number]>(
    'HEADERS_TOO_LARGE',
    'Request line and headers are larger than %s bytes',
    431,
    undefined,
    false,
  ),
  REQUEST_TIMEOUT: createError('REQUEST_TIMEOUT', 'The request was not received in time', 408, undefined, false),
  BAD_REQUEST: createError('BAD_REQUEST', 'Malformed HTTP request', 400, undefined, false),
  ORIGIN_NOT_ALLOWED: createError<'ORIGIN_NOT_ALLOWED', 403, [string]>(
    'ORIGIN_NOT_ALLOWED',
    'Live sockets are not accepted from the origin %s',
    403,
    undefined,
    false,
  ),
  NOT_FOUND: createError('NOT_FOUND', 'No such route', 404, undefined, false),
  UPGRADE_NOT_SUPPORTED: createError(
    'UPGRADE_NOT_SUPPORTED',
    'Only /api/live accepts WebSocket upgrades',
    400,
    undefined,
    false,
  ),
  UPGRADE_REQUIRED: createError(
    'UPGRADE_REQUIRED',
    '/api/live is a WebSocket: open it with the subprotocol hookwatch.v1',
    426,
    undefined,
    false,
  ),
  NAME_TAKEN: createError<'NAME_TAKEN', 409, [string]>(
    'NAME_TAKEN',
    'The name %s is taken by a living endpoint; choose another',
    409,
    undefined,
    false,
  ),
  UNAUTHORIZED: createError<'UNAUTHORIZED', 401, [string]>('UNAUTHORIZED', 'Sign in first: %s', 401, undefined, false),
  TOO_MANY_KEPT: createError<'TOO_MANY_KEPT', 429, [number, string]>(
    'TOO_MANY_KEPT',
    'You already hold %s kept endpoints (%s); delete one or let one expire first',
    429,
    undefined,
    false,
  ),
  STORE_UNAVAILABLE: createError(
    'STORE_UNAVAILABLE',
    'The store is unreachable; try again shortly',
    503,
    undefined,
    false,
  ),
  INTERNAL: createError('INTERNAL', 'Internal error', 500, undefined, false),
  // Live protocol only (sent in an `error` message, never as an HTTP status).
  BAD_MESSAGE: createError<'BAD_MESSAGE', 400, [string]>('BAD_MESSAGE', 'Malformed message: %s', 400, undefined, false),
  TOO_MANY_MESSAGES: createError<'TOO_MANY_MESSAGES', 429, [number]>(
    'TOO_MANY_MESSAGES',
    'More than %s messages a second on one socket',
    429,
    undefined,
    false,
  ),
  NOT_JOINED: createError('NOT_JOINED', 'Send "create" or "join" first', 400, undefined, false),
  ALREADY_JOINED: createError(
    'ALREADY_JOINED',
    'This socket already watches an endpoint; open another socket to watch another',
    400,
    undefined,
    false,
  ),
  TOO_MANY_WATCHERS: createError<'TOO_MANY_WATCHERS', 503, [number]>(
    'TOO_MANY_WATCHERS',
    'This endpoint already has %s watchers',
    503,
    undefined,
    false,
  ),
} as const;

export type ErrorCode = keyof typeof errors;

/**
 * The `reason` label each error gets in `hookwatch_rejections_total`, in one table for HTTP,
 * the parser and the socket. Codes absent here are not rejections (INTERNAL is a bug, not a refusal).
 */
export const REJECTION_REASONS = {
  ENDPOINT_NOT_FOUND: 'endpoint_not_found',
  REQUEST_NOT_FOUND: 'request_not_found',
  INVALID_RESPONSE_CONFIG: 'invalid_response_config',
  BODY_TOO_LARGE: 'body_too_large',
  INVALID_REQUEST: 'invalid_request',
  AT_CAPACITY: 'at_capacity',
  RATE_LIMITED: 'rate_limited',
  TOO_MANY_CONNECTIONS: 'too_many_connections',
  TOO_MANY_SOCKETS: 'too_many_sockets',
  HEADERS_TOO_LARGE: 'headers_too_large',
  REQUEST_TIMEOUT: 'request_timeout',
  BAD_REQUEST: 'bad_request',
  ORIGIN_NOT_ALLOWED: 'origin_not_allowed',
  NOT_FOUND: 'not_found',
  UPGRADE_NOT_SUPPORTED: 'upgrade_not_supported',
  UPGRADE_REQUIRED: 'upgrade_required',
  NAME_TAKEN: 'name_taken',
  STORE_UNAVAILABLE: 'store_unavailable',
  UNAUTHORIZED: 'unauthorized',
  TOO_MANY_KEPT: 'too_many_kept',
  BAD_MESSAGE: 'bad_message',
  TOO_MANY_MESSAGES: 'too_many_messages',
  NOT_JOINED: 'not_joined',
  ALREADY_JOINED: 'already_joined',
  TOO_MANY_WATCHERS: 'too_many_watchers',
} as const satisfies Partial<Record<ErrorCode, string>>;

export type RejectionReason = (typeof REJECTION_REASONS)[keyof typeof REJECTION_REASONS] | 'slow_watcher';

export function rejectionReasonOf(code: string): RejectionReason | undefined {
  return (REJECTION_REASONS as Record<string, RejectionReason | undefined>)[code];
}

export interface ErrorBody {
  error: { code: string; message: string };
}

export function toErrorBody(error: { code: string; message: string }): ErrorBody {
  return { error: { code: error.code, message: error.message } };
}
