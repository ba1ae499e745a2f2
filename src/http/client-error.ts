import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errors, rejectionReasonOf } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { rawErrorAnswer } from './raw-errors.js';

/** Our error for each parser error code; anything else is BAD_REQUEST. */
const BY_PARSER_CODE: Record<
  string,
  (maxHeaderBytes: number) => { code: string; message: string; statusCode: number }
> = {
  HPE_HEADER_OVERFLOW: (maxHeaderBytes) => errors.HEADERS_TOO_LARGE(maxHeaderBytes),
  ERR_HTTP_REQUEST_TIMEOUT: () => errors.REQUEST_TIMEOUT(),
};

/**
 * Answers what Node's HTTP parser rejects before any route runs (oversized head, broken framing,
 * a sender too slow to finish), in our error format, then closes the connection. Requests that
 * arrived whole before the broken bytes on the same connection (pipelined) are answered first:
 * they are being captured, and their records say how they were answered.
 */
export function createClientErrorHandler(options: {
  maxHeaderBytes: number;
  metrics: Metrics;
  log: FastifyBaseLogger;
}) {
  const answering = new WeakSet<Socket>();
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset socket is already gone: nothing to answer. A socket already being answered may
    // report its failed parser again as more bytes arrive.
    if (err.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return;
    answering.add(socket);
    const error = ((err.code !== undefined && BY_PARSER_CODE[err.code]) || (() => errors.BAD_REQUEST()))(
      options.maxHeaderBytes,
    );
    const reason = rejectionReasonOf(error.code);
    if (reason) options.metrics.reject(reason);
    options.log.debug({ code: err.code }, 'client error');
    // Nothing more is read. The wait is only for answers already under way, which the
    // connection would have held as long without the broken bytes.
    socket.pause();
    afterAnswersInProgress(socket, () => {
      if (socket.writable) socket.write(rawErrorAnswer(error));
      socket.destroy();
    });
  };
}

/**
 * Runs `then` once the connection has no response in progress to a whole request. Node gives
 * a connection's responses the socket one at a time, in request order (`_httpMessage`), the
 * next as the previous one finishes, so this waits for each in turn.
 */
function afterAnswersInProgress(socket: Socket, then: () => void): void {
  const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A request still incomplete is the one the broken bytes belong to: it gets the error.
  if (!inProgress || inProgress.writableFinished || !inProgress.req.complete || socket.destroyed) return then();
  const next = () => {
    inProgress.off('finish', next).off('close', next);
    // Node hands the socket to the next queued response in its own 'finish' listener, added first.
    afterAnswersInProgress(socket, then);
  };
  inProgress.on('finish', next).on('close', next);
}
