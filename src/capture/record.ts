import type { FastifyRequest } from 'fastify';
import { choicesFor, recordedAnswers, requestRuleInput } from '../answers/rule-answers.js';
import type { Config } from '../config.js';
import { maxBodyBytesFor } from '../endpoints/endpoint-records.js';
import { ONLY_DEFAULT, type AnswerChoice, type RuleInput } from '../shared/answer-rules.js';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import type { MultipartPart, RecordedAnswer } from '../shared/schemas/captured-request.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';
import type { EndpointKind, EntryBuilder, NewEntry } from '../store/store.js';
import { isMultipartFormData, parseMultipart } from './multipart.js';
import type { ReadBody } from './read-body.js';
import { maxRecordBytes } from './record-bounds.js';
import { toRecordBytes } from './to-record.js';
import { createUtcTimeFormatter } from './utc-time.js';

/** The record's answer for a body past the read limit: Hookwatch's own 413. */
const TOO_LARGE_ANSWERS: readonly string[] = [
  JSON.stringify({ status: 413, delayMs: 0, by: 'error' } satisfies RecordedAnswer),
];

/** A request ready to store: its entry built for whichever configuration is in force then. */
export interface Prepared {
  /** Builds the new entry for a configuration (the store calls it as it stores). */
  recordFor: EntryBuilder;
  /** The answer choices of the entry last built: the store takes one of them. */
  choices(): readonly AnswerChoice[];
  /** What answer rules see of the request, worked out once, when first asked. */
  inputOf(): RuleInput;
}

/**
 * Builds the record of a request whose body has been read: its multipart parts first, then, for
 * the configuration in force when the store stores it, the record's bytes, the answer choices and
 * the answer each gives.
 */
export function createRecordBuilder(config: Pick<Config, 'requestLimits' | 'endpoints'>) {
  const maxRecord = (kind: EndpointKind) =>
    maxRecordBytes({
      maxBodyBytes: maxBodyBytesFor(config.requestLimits, kind),
      maxHeaderBytes: config.requestLimits.maxHeaderBytes,
    });
  const maxRecordOf: Record<EndpointKind, number> = { live: maxRecord('live'), kept: maxRecord('kept') };
  const redactAlso = new Set(config.endpoints.redactHeaders);
  const captureOptions = { maxJsonDepth: config.requestLimits.maxJsonDepth, formatTime: createUtcTimeFormatter() };

  return async (
    request: FastifyRequest,
    body: ReadBody,
    kind: EndpointKind,
    endpointId: string,
    receivedAtMs: number,
  ): Promise<Prepared> => {
    const endpointPath = RECEIVER_PREFIXES[kind] + endpointId;
    let input: RuleInput | undefined;
    const inputOf = () => (input ??= requestRuleInput(request, endpointPath, body));
    let choices: readonly AnswerChoice[] = ONLY_DEFAULT;
    const contentType = headerValue(request.raw.rawHeaders, 'content-type');
    let parts: MultipartPart[] | null = null;
    if (isMultipartFormData(contentType)) parts = await parseMultipart(body.bytes, contentType, body.truncated);
    // An object literal here, not a spread of a prepared one: a spread changes the object's
    // shape and slows every later property read (docs/performance.md).
    const recordFor = (response: ResponseConfig, redact: boolean): NewEntry => {
      choices = body.overLimit ? ONLY_DEFAULT : choicesFor(response, inputOf);
      const record = toRecordBytes(
        {
          method: request.method,
          url: request.raw.url ?? '',
          endpointPath,
          rawHeaders: request.raw.rawHeaders,
          body: body.bytes,
          size: body.size,
          truncated: body.truncated,
          remoteAddress: request.ip,
          receivedAtMs,
          parts,
          // Secrets go before storage (kept endpoints, unless their creator chose otherwise), so
          // nothing redacted is stored, logged or sent.
          ...(redact ? { redact: redactAlso } : {}),
        },
        captureOptions,
        maxRecordOf[kind],
      );
      return { record, choices, answers: body.overLimit ? TOO_LARGE_ANSWERS : recordedAnswers(response, choices) };
    };
    return { recordFor, choices: () => choices, inputOf };
  };
}

function headerValue(rawHeaders: string[], lowerName: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return rawHeaders[i + 1] as string;
  }
  return null;
}
