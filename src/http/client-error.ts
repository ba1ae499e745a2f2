import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errors, toErrorBody } from '../errors.js';
import type { Metrics, RejectionReason } from '../metrics.js';
import { RECEIVER_HEADERS } from './receiver-route.js';

/** Our error and metric label for each parser error code; anything else is BAD_REQUEST. */
const BY_PARSER_CODE: Record<string, { error: (maxHeaderBytes: number) => { code: string; message: string; statusCode: number }; reason: RejectionReason }> = {
  HPE_HEADER_OVERFLOW: { error: (maxHeaderBytes) => errors.HEADERS_TOO_LARGE(maxHeaderBytes), reason: 'headers_too_large' },
  ERR_HTTP_REQUEST_TIMEOUT: { error: () => errors.REQUEST_TIMEOUT(), reason: 'request_timeout' },
};
const OTHER = { error: () => errors.BAD_REQUEST(), reason: 'bad_request' as const };

/** The receiver's safety headers as raw header lines: these answers come from the parser, not a route. */
const HEADER_LINES = Object.entries(RECEIVER_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/**
 * One of our errors as a whole raw HTTP/1.1 answer that closes the connection, for sockets no
 * route will answer (parser errors, refused upgrades).
 */
export function rawErrorAnswer(error: { code: string; message: string; statusCode: number }): string {
  const body = JSON.stringify(toErrorBody(error));
  return (
    `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    HEADER_LINES +
    `Connection: close\r\n\r\n${body}`
  );
}

/**
 * Answers what Node's HTTP parser rejects before any route runs (oversized head, broken framing,
 * a sender too slow to finish), in our error format, then closes the connection.
 */
export function createClientErrorHandler(options: { maxHeaderBytes: number; metrics: Metrics; log: FastifyBaseLogger }) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset socket is already gone: nothing to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const kind = (err.code !== undefined && BY_PARSER_CODE[err.code]) || OTHER;
    const error = kind.error(options.maxHeaderBytes);
    options.metrics.reject(kind.reason);
    options.log.debug({ code: err.code }, 'client error');
    if (socket.writable) socket.write(rawErrorAnswer(error));
    socket.destroy();
  };
}
