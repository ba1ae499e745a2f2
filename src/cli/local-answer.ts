import { isUtf8 } from 'node:buffer';
import { MAX_LOCAL_ANSWER_BODY_BYTES, type LocalAnswerMessage } from '../shared/protocol.js';
import type { SendResult } from './send-request.js';

/** Why the target's answer cannot be relayed to its sender, or undefined when it can. */
export function localAnswerProblem(result: Extract<SendResult, { ok: true }>): string | undefined {
  if (result.status === 101) return 'a protocol switch (101) cannot be passed to a sender';
  if (result.status < 200 || result.status > 599) return `status ${result.status}`;
  if (result.body.length > MAX_LOCAL_ANSWER_BODY_BYTES || result.bodyTruncated)
    return `its body is over ${MAX_LOCAL_ANSWER_BODY_BYTES} bytes, or was cut`;
  return undefined;
}

/** The `local-answer` message for request `seq`: the whole answer, its body as text when it is UTF-8. */
export function toLocalAnswer(seq: number, result: Extract<SendResult, { ok: true }>): LocalAnswerMessage {
  const text = isUtf8(result.body);
  return {
    type: 'local-answer',
    seq,
    status: result.status,
    // Within what the server takes (client-messages.ts): a longer header would get the whole answer refused.
    headers: result.headers.filter(([name, value]) => name.length <= 256 && value.length <= 8192).slice(0, 100),
    body: text ? result.body.toString('utf8') : result.body.toString('base64'),
    bodyEncoding: text ? 'utf8' : 'base64',
  };
}
