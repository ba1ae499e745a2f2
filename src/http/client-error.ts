import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errors, toErrorBody } from '../errors.js';
import type { Metrics } from '../metrics.js';

/**
 * Answers what Node's HTTP parser rejects before any route runs (oversized head, broken framing,
 * a sender too slow to finish), in our error format, then closes the connection.
 */
export function createClientErrorHandler(options: { maxHeaderBytes: number; metrics: Metrics; log: FastifyBaseLogger }) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset socket is already gone: nothing to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? errors.HEADERS_TOO_LARGE(options.maxHeaderBytes)
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? errors.REQUEST_TIMEOUT()
          : errors.BAD_REQUEST();
    options.metrics.reject(err.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'bad_request');
    options.log.debug({ code: err.code }, 'client error');
    if (socket.writable) {
      const body = JSON.stringify(toErrorBody(error));
      socket.write(
        `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'X-Hookwatch-Response: error\r\nContent-Security-Policy: sandbox\r\nX-Content-Type-Options: nosniff\r\n' +
          `Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
