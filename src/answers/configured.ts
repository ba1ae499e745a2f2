import type { FastifyReply, FastifyRequest } from 'fastify';
import { deadline } from '../shared/deadline.js';
import { RECEIVER_HEADERS, RESPONSE_SOURCE_HEADER } from './receiver-headers.js';
import type { Answer } from './rule-answers.js';

/** Waits `ms` (a configured delay), or less when a signal aborts first. */
export function pause(ms: number, ...signals: AbortSignal[]): Promise<void> {
  const wait = deadline(ms, ...signals);
  if (wait.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => wait.signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Answers a sender with its endpoint's configured answer (or the rule's that matched). */
export function sendConfigured(request: FastifyRequest, reply: FastifyReply, response: Answer) {
  const preflightMethod = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : undefined;
  if (preflightMethod !== undefined) {
    // A CORS preflight is captured like any request, but answered so the browser lets the real
    // request through whatever status is configured.
    const requestedHeaders = request.headers['access-control-request-headers'];
    reply.headers(RECEIVER_HEADERS).header(RESPONSE_SOURCE_HEADER, 'configured');
    reply.headers({
      'access-control-allow-methods': preflightMethod,
      'access-control-max-age': '600',
      ...(requestedHeaders === undefined ? {} : { 'access-control-allow-headers': requestedHeaders }),
    });
    return reply.code(204).send();
  }
  const answer = preparedAnswers.get(response) ?? prepareAnswer(response);
  // Written on the raw response, the header lines prepared once per configuration: through
  // Fastify each answer set, lowercased and re-read every header and parsed its content type.
  // No hook of this route runs after the handler (onSend, onResponse), so nothing is skipped.
  reply.hijack();
  const raw = reply.raw;
  if (answer.body === undefined) {
    // As Fastify answers with no payload: Content-Length 0, except for 204 and HEAD.
    raw.writeHead(
      answer.status,
      answer.status !== 204 && request.method !== 'HEAD' ? answer.emptyHeaders : answer.headers,
    );
    raw.end();
  } else {
    raw.writeHead(answer.status, answer.headers);
    raw.end(answer.body);
  }
  return undefined;
}

/** A configured answer ready to write: its status, header lines (`[name, value, …]`) and body. */
interface PreparedAnswer {
  status: number;
  headers: string[];
  /** With `content-length: 0`, for an answer without a body. */
  emptyHeaders: string[];
  body: Buffer | undefined;
}

/** Keyed by the configuration object, which a store keeps until the configuration changes. */
const preparedAnswers = new WeakMap<Answer, PreparedAnswer>();

/**
 * The answer for `sendConfigured`'s configuration: RECEIVER_HEADERS with the source set to
 * 'configured', the configured headers as given (in order, with their case, a repeated name once
 * per pair; none of them can be one of ours, see response-config.ts), and for a body its content
 * type and length.
 */
function prepareAnswer(response: Answer): PreparedAnswer {
  const lines = [
    ...Object.entries({ ...RECEIVER_HEADERS, [RESPONSE_SOURCE_HEADER]: 'configured' }).flat(),
    ...response.headers.flat(),
  ];
  let body: Buffer | undefined;
  if (response.status !== 204 && response.body !== '') {
    const charset =
      response.contentType.startsWith('text/') || response.contentType === 'application/json' ? '; charset=utf-8' : '';
    body = Buffer.from(response.body);
    lines.push('content-type', `${response.contentType}${charset}`, 'content-length', String(body.length));
  }
  const answer = { status: response.status, headers: lines, emptyHeaders: [...lines, 'content-length', '0'], body };
  preparedAnswers.set(response, answer);
  return answer;
}
