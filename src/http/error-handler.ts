import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SenderGoneError } from '../capture/read-body.js';
import { errors, rejectionReasonOf, toErrorBody } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { StoreUnavailableError } from '../store/store.js';
import { RESPONSE_SOURCE_HEADER } from '../answers/receiver-headers.js';
import { receiverTarget } from '../capture/target.js';
import type { CaptureUnrouted } from './receiver-route.js';

/**
 * Turns every error a route throws into the JSON error body of errors.ts, counted in the
 * rejection metrics: codes from the table as they are, a 4xx from Fastify as BAD_REQUEST, and
 * anything else as INTERNAL (logged). A sender gone mid-body is not answered at all.
 */
export function createErrorHandler(metrics: Metrics) {
  const sendError = (
    error: { code: string; message: string; statusCode?: number },
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const reason = rejectionReasonOf(error.code);
    if (reason) metrics.reject(reason);
    reply.header(RESPONSE_SOURCE_HEADER, 'error');
    // A refused upgrade must not leave a half-open connection waiting for a protocol switch.
    if (request.headers.upgrade !== undefined) reply.header('connection', 'close');
    return reply.code(error.statusCode ?? 500).send(toErrorBody(error));
  };

  const handleError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error }, 'store unavailable');
      return sendError(errors.STORE_UNAVAILABLE(), request, reply);
    }
    if (error instanceof SenderGoneError) {
      // Not a fault: any client can hang up mid-body, and there is no one left to answer.
      request.log.debug({ reason: error.message }, 'request aborted');
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    const known = (errors as Record<string, unknown>)[error.code] !== undefined;
    const status = error.statusCode ?? 500;
    if (known) return sendError(error, request, reply);
    if (status >= 400 && status < 500) return sendError(errors.BAD_REQUEST(), request, reply);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(errors.INTERNAL(), request, reply);
  };

  return { sendError, handleError };
}

/**
 * Errors the router raises before any route, answered in our format. A receiver URL the router
 * cannot decode (a malformed `%` escape in its sub-path) is still a request to the endpoint, and
 * is captured by the receiver's `captureUnrouted`.
 */
export async function handleRouterError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  captureUnrouted: CaptureUnrouted,
  handleError: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown,
): Promise<unknown> {
  try {
    const toReceiver = receiverTarget(request.raw.url ?? '') !== undefined;
    if (error.code === 'FST_ERR_BAD_URL' && toReceiver) return await captureUnrouted(request, reply);
    // An id longer than any we give out.
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' && toReceiver) throw errors.ENDPOINT_NOT_FOUND();
    throw errors.BAD_REQUEST();
  } catch (thrown) {
    return handleError(thrown as FastifyError, request, reply);
  }
}
