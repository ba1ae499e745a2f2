/**
 * A captured request as bytes (docs/protocol.md, "hookwatch.v2"). The capture encodes its record
 * once: its fields as a small JSON header, its body beside it raw. Every store keeps those bytes
 * as they are, with the request's seq and the answer its sender got beside them, and a v2 socket
 * gets all three in one binary frame:
 *
 * ```
 * record:        u32 header length H | H bytes of JSON header | the body's stored bytes
 * request frame: u8 kind (1) | u64 seq | u32 answer length A | A bytes of answer JSON | record
 * ```
 *
 * Numbers are big-endian. The header holds every field of the record (CapturedRequest) except
 * `seq`, `body`, `bodyEncoding` and `answer`. The page and the CLI read frames with
 * `decodeRequestFrame`; this module runs in both (no Buffer).
 */
import type { CapturedRequest, RecordedAnswer } from './schemas/captured-request.js';
import { encodeBase64 } from './signatures/bytes.js';
import type { ServerMessage } from './schemas/live-messages.js';

/** The first byte of a binary frame that carries a `request`. */
export const REQUEST_FRAME_KIND = 1;
/** Kind, seq: the bytes before the answer's length. */
export const REQUEST_FRAME_SEQ_BYTES = 9;

/** What a record's header holds: the record without what the frame carries beside it. */
export type RecordHeader = Omit<CapturedRequest, 'seq' | 'body' | 'bodyEncoding' | 'answer'>;

export class BadFrameError extends Error {
  constructor(problem: string) {
    super(`bad request frame: ${problem}`);
    this.name = 'BadFrameError';
  }
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** A record's header and its body bytes (a view into `record`, not a copy). */
export function splitRecord(record: Uint8Array): { header: RecordHeader; body: Uint8Array } {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  if (record.byteLength < 4) throw new BadFrameError('record shorter than its header length');
  const headerLength = view.getUint32(0);
  if (4 + headerLength > record.byteLength) throw new BadFrameError('header runs past the record');
  const header = JSON.parse(utf8.decode(record.subarray(4, 4 + headerLength))) as RecordHeader;
  return { header, body: record.subarray(4 + headerLength) };
}

/** The `request` message a v2 binary frame carries, as the v1 text frame would give it. */
export function decodeRequestFrame(frame: Uint8Array): { type: 'request'; request: CapturedRequest } {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (frame.byteLength < REQUEST_FRAME_SEQ_BYTES + 4) throw new BadFrameError('shorter than its fixed fields');
  if (view.getUint8(0) !== REQUEST_FRAME_KIND) throw new BadFrameError(`unknown kind ${view.getUint8(0)}`);
  const seq = view.getUint32(1) * 2 ** 32 + view.getUint32(5);
  const answerLength = view.getUint32(REQUEST_FRAME_SEQ_BYTES);
  const answerEnd = REQUEST_FRAME_SEQ_BYTES + 4 + answerLength;
  if (answerEnd > frame.byteLength) throw new BadFrameError('answer runs past the frame');
  const answer = JSON.parse(utf8.decode(frame.subarray(REQUEST_FRAME_SEQ_BYTES + 4, answerEnd))) as RecordedAnswer;
  const { header, body } = splitRecord(frame.subarray(answerEnd));
  const text = textOf(body);
  return {
    type: 'request',
    request:
      text === undefined
        ? { seq, ...header, body: encodeBase64(body), bodyEncoding: 'base64', answer }
        : { seq, ...header, body: text, bodyEncoding: 'utf8', answer },
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text when its bytes are UTF-8 (a v2 client has no escaping to weigh, unlike v1's JSON). */
function textOf(body: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(body);
  } catch {
    return undefined;
  }
}

/** A server message as a socket delivers it: JSON text, or (v2) a binary `request` frame. */
export function decodeServerMessage(data: string | ArrayBuffer | Uint8Array): ServerMessage {
  if (typeof data === 'string') return JSON.parse(data) as ServerMessage;
  return decodeRequestFrame(data instanceof Uint8Array ? data : new Uint8Array(data));
}
