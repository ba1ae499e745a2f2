/**
 * A local app's answer on its way from the responder (`hookwatch forward --respond`) to the
 * sender waiting on some instance. The responder's instance checks it and
 * drops the headers that may not be relayed (`toRelayed`), then publishes it on the bus; the
 * sender's instance reads it back (`relayedFrom`) and writes it.
 */
import { isDeniedHeader } from '../shared/schemas/response-config.js';
import { MAX_LOCAL_ANSWER_BODY_BYTES, type LocalAnswerMessage } from '../shared/protocol.js';

/** Headers about one connection (RFC 9110 section 7.6.1), never relayed. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
]);

/** Denied for a configured answer, but part of the local app's body as sent. */
const KEPT_FRAMING = new Set(['content-type', 'content-encoding']);

/**
 * Media types a browser renders as a document (or a feed of them): a local app's answer of one of
 * these is relayed as text/plain, so a receiver URL never serves a page, whatever the app sends.
 */
const RENDERED_TYPES =
  /^\s*(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xsl|application\/xslt\+xml|multipart\/)/i;

/** As published on the bus: the answer with the headers it keeps, and the names it dropped. */
export interface RelayedAnswer {
  status: number;
  headers: Array<[string, string]>;
  droppedHeaders: string[];
  body: string;
  bodyEncoding: 'utf8' | 'base64';
}

/**
 * The answer to relay, or why it cannot be: a status outside 200-599 (a protocol switch, 101,
 * cannot be passed through an HTTP answer), or a body over 1 MiB. Hop-by-hop headers, the ones a
 * configured answer may not set (cookies, redirects, CSP…, see response-limits.ts) are dropped
 * and listed; so is content-length, which the receiver writes. Its content type and encoding
 * are kept, since the body is relayed as the app sent it, except a type a browser renders as a
 * page (HTML, SVG, XHTML…), which becomes text/plain and is listed as dropped: every receiver answer carries
 * `Content-Security-Policy: sandbox` and `nosniff`, so nothing in it runs on our origin.
 */
export function toRelayed(
  message: LocalAnswerMessage,
): { ok: true; value: RelayedAnswer } | { ok: false; problem: string } {
  if (message.status === 101)
    return {
      ok: false,
      problem: 'a protocol switch (101) cannot be relayed to a sender: it gets the configured answer',
    };
  if (message.status < 200 || message.status > 599)
    return { ok: false, problem: `status ${message.status} cannot be relayed: 200-599 only` };
  const bytes =
    message.bodyEncoding === 'base64' ? Buffer.byteLength(message.body, 'base64') : Buffer.byteLength(message.body);
  if (bytes > MAX_LOCAL_ANSWER_BODY_BYTES)
    return { ok: false, problem: `the body is ${bytes} bytes: at most ${MAX_LOCAL_ANSWER_BODY_BYTES} are relayed` };
  const headers: Array<[string, string]> = [];
  const dropped = new Set<string>();
  for (const [name, value] of message.headers) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || (isDeniedHeader(lower) && !KEPT_FRAMING.has(lower)) || !isRelayable(name, value))
      dropped.add(lower);
    else if (lower === 'content-type' && RENDERED_TYPES.test(value)) {
      dropped.add(lower);
      headers.push([name, 'text/plain; charset=utf-8']);
    } else headers.push([name, value]);
  }
  return {
    ok: true,
    value: {
      status: message.status,
      headers,
      droppedHeaders: [...dropped],
      body: message.body,
      bodyEncoding: message.bodyEncoding,
    },
  };
}

/** What Node would refuse to write: a name that is not a token, a value with CR, LF or other controls. */
function isRelayable(name: string, value: string): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) && /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

/** The answer as the responder's instance published it (our own instances' JSON). */
export function relayedFrom(data: Buffer | string): RelayedAnswer & { bytes: Buffer } {
  const answer = JSON.parse(data.toString()) as RelayedAnswer;
  return { ...answer, bytes: Buffer.from(answer.body, answer.bodyEncoding === 'base64' ? 'base64' : 'utf8') };
}
