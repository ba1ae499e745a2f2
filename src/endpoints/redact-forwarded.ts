import { redactHeaders } from '../shared/redact.js';
import type { ForwardedMessage } from '../shared/protocol.js';

/** Answer headers that carry a credential beyond the request-side rule: a cookie being set. */
const ANSWER_SECRETS = ['set-cookie', 'set-cookie2'];

/**
 * A forwarder's report with the endpoint's redaction applied to the local app's answer: its
 * secret header values (the request rule, plus Set-Cookie) become `[redacted]`, names and order
 * kept. The body is passed on as a captured request's body is: unredacted, and cut to 4 KiB.
 */
export function redactForwarded(message: ForwardedMessage, redactAlso: ReadonlySet<string>): ForwardedMessage {
  const headers = message.headers.map(([name, value]): [string, string] => [name, value]);
  redactHeaders(headers, new Set([...redactAlso, ...ANSWER_SECRETS]));
  return { ...message, headers };
}
