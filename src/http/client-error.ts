import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errors, rejectionReasonOf } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { rawErrorAnswer } from './answers.js';

/** Our error for each parser error code; anything else is BAD_REQUEST. */
const BY_PARSER_CODE: Record<string, (maxHeaderBytes: number) => { code: string; message: string; statusCode: number }> = {
  HPE_HEADER_OVERFLOW: (maxHeaderBytes) => errors.HEADERS_TOO_LARGE(maxHeaderBytes),
  ERR_HTTP_REQUEST_TIMEOUT: () => errors.REQUEST_TIMEOUT(),
};

/**
 * Answers what Node's HTTP parser rejects before any route runs (oversized head, broken framing,
 * a sender too slow to finish), in our error format, then closes the connection.
 */
export function createClientErrorHandler(options: { maxHeaderBytes: number; metrics: Metrics; log: FastifyBaseLogger }) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset socket is already gone: nothing to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error = ((err.code !== undefined && BY_PARSER_CODE[err.code]) || (() => errors.BAD_REQUEST()))(options.maxHeaderBytes);
    const reason = rejectionReasonOf(error.code);
    if (reason) options.metrics.reject(reason);
    options.log.debug({ code: err.code }, 'client error');
    if (socket.writable) socket.write(rawErrorAnswer(error));
    socket.destroy();
  };
}
