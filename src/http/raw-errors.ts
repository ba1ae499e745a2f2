import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { RECEIVER_HEADERS } from '../answers/receiver-headers.js';
import { toErrorBody } from '../errors.js';

/** The receiver's safety headers as raw header lines: these answers come from the parser, not a route (a sender may get one). */
const HEADER_LINES = Object.entries(RECEIVER_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/**
 * One of our errors as a whole raw HTTP/1.1 answer that closes the connection, for sockets no
 * route will answer (parser errors, refused upgrades and connections).
 */
export function rawErrorAnswer(
  error: { code: string; message: string; statusCode: number },
  extraHeaders = '',
): string {
  const body = JSON.stringify(toErrorBody(error));
  return (
    `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    HEADER_LINES +
    extraHeaders +
    `Connection: close\r\n\r\n${body}`
  );
}

/**
 * Answers one of our errors on a socket Node has handed over (an upgrade, a CONNECT) and closes
 * it. Such a socket has none of the server's timeouts and no error handler: it is destroyed once
 * the answer is flushed, so a client that never closes its side cannot keep it, and a reset
 * cannot become an uncaught error.
 */
export function refuseHandedOver(socket: Duplex, error: { code: string; message: string; statusCode: number }): void {
  socket.on('error', () => socket.destroy());
  socket.end(rawErrorAnswer(error), () => socket.destroy());
}
