import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { jsonBodyOf } from './json-body.js';

/**
 * A captured request as stored: its seq, the answer its sender got (JSON), and its record as the
 * capture encoded it (shared/request-frame.ts: header JSON and raw body). The three travel
 * side by side and are never spliced together: a v2 socket gets them in one binary frame, the
 * answer changing (`setAnswer`) replaces only the answer.
 */
export interface StoredRequest {
  seq: number;
  answer: string;
  record: RecordBytes;
  /** The latest `forwarded` message a forwarder reported for it, when there is one (readLog only). */
  forwarded?: string;
}

/**
 * A record's bytes (shared/request-frame.ts) in their two parts, which written one after the
 * other are the record: `head`, the u32 header length and the header's JSON, and `body`, the
 * stored bytes. Kept apart so a large body is stored as it was read, not copied.
 */
export interface RecordBytes {
  head: Buffer;
  body: Buffer;
}

export const recordLength = (record: RecordBytes): number => record.head.length + record.body.length;

/** The record as one buffer (a Redis argument, a test). */
export const recordBuffer = (record: RecordBytes): Buffer => Buffer.concat([record.head, record.body]);

/**
 * The record of a header and a body. A body that is a buffer of its own (a large one, gathered
 * from many reads) is kept as it is, with a head of its own; otherwise head and body are copied
 * into one buffer, since such a body is most often a view into the socket's read buffer, which
 * holds the request's head too and would stay alive with it.
 */
export function encodeRecord(headerJson: string, body: Uint8Array): RecordBytes {
  const headerBytes = Buffer.byteLength(headerJson);
  const owned = Buffer.isBuffer(body) && body.byteOffset === 0 && body.buffer.byteLength === body.length;
  const bytes = allocate(4 + headerBytes + (owned ? 0 : body.length));
  bytes.writeUInt32BE(headerBytes, 0);
  bytes.write(headerJson, 4, 'utf8');
  if (owned) return { head: bytes, body };
  bytes.set(body, 4 + headerBytes);
  return { head: bytes.subarray(0, 4 + headerBytes), body: bytes.subarray(4 + headerBytes) };
}

/**
 * A buffer for stored bytes: a small one from Node's shared pool, as `Buffer.from` takes it (a
 * buffer of its own costs a few µs more each); a larger one of its own, so freeing it frees its
 * memory.
 */
const allocate = (length: number): Buffer =>
  length < POOLED_BELOW_BYTES ? Buffer.allocUnsafe(length) : Buffer.allocUnsafeSlow(length);

/** Node's pool serves allocations below half its size (Buffer.poolSize, 8 KiB). */
const POOLED_BELOW_BYTES = 4 * 1024;

/**
 * A request's bytes as one stored value (a Redis list element, an SQLite row): u32 answer
 * length, the answer's JSON, the record. Its length is what every backend counts
 * (log/rulebook.ts, storedCost).
 */
export function toElement(answer: string, record: RecordBytes): Buffer {
  const answerBytes = Buffer.byteLength(answer);
  const element = allocate(4 + answerBytes + recordLength(record));
  element.writeUInt32BE(answerBytes, 0);
  element.write(answer, 4, 'utf8');
  record.head.copy(element, 4 + answerBytes);
  record.body.copy(element, 4 + answerBytes + record.head.length);
  return element;
}

/** Bytes of `toElement(answer, record)`, without building it. */
export const elementLength = (answer: string, record: RecordBytes): number =>
  4 + Buffer.byteLength(answer) + recordLength(record);

/**
 * The request held in a stored value: an element, or a whole v1 `request` message as stores
 * kept before records were bytes (it starts with `{`, which no element does: an answer's length
 * is far below 2^24). The record is a view into `element`, not a copy.
 */
export function fromElement(seq: number, value: Buffer, forwarded?: string): StoredRequest {
  if (value[0] === 0x7b) return fromV1Message(value, forwarded);
  // A small value handed over as a view into a much larger buffer (a Redis reply or pub/sub
  // read chunk) is copied, so keeping the request does not keep the rest of that buffer alive.
  const element = value.buffer.byteLength > 2 * value.length + 4096 ? Buffer.from(value) : value;
  const answerEnd = element.length < 8 ? Infinity : 4 + element.readUInt32BE(0);
  const headEnd = answerEnd + 4 > element.length ? Infinity : answerEnd + 4 + element.readUInt32BE(answerEnd);
  if (headEnd > element.length) throw new Error(`stored request ${seq}: not an element`);
  const stored: StoredRequest = {
    seq,
    answer: element.toString('utf8', 4, answerEnd),
    record: { head: element.subarray(answerEnd, headEnd), body: element.subarray(headEnd) },
  };
  if (forwarded !== undefined) stored.forwarded = forwarded;
  return stored;
}

/**
 * The requests a store read, as `[seq, value, forwarded]`: each value that cannot be read (a
 * corrupt row) is left out, so one bad value does not make the whole log unreadable.
 */
export function storedRequestsOf(rows: Iterable<[number, Buffer, string | undefined]>): StoredRequest[] {
  const requests: StoredRequest[] = [];
  for (const [seq, value, forwarded] of rows) {
    try {
      requests.push(fromElement(seq, value, forwarded));
    } catch {
      // Left out: readers see a gap where it was, as for a request deleted.
    }
  }
  return requests;
}

/** A request stored as a v1 message (`{"type":"request","request":{…}}`), as bytes. */
function fromV1Message(message: Buffer, forwarded?: string): StoredRequest {
  const { request } = JSON.parse(message.toString('utf8')) as { request: CapturedRequest };
  const { seq, body, bodyEncoding, answer, ...header } = request;
  const record = encodeRecord(JSON.stringify(header), Buffer.from(body, bodyEncoding === 'base64' ? 'base64' : 'utf8'));
  const stored: StoredRequest = { seq, answer: JSON.stringify(answer), record };
  if (forwarded !== undefined) stored.forwarded = forwarded;
  return stored;
}

/**
 * The request as the JSON record protocol v1 and the HTTP API give (`{"seq":…,…,"answer":…}`),
 * its body escaped or base64-encoded (json-body.ts): worked out only for a client that reads
 * JSON, never to store or send to a v2 socket.
 */
export function recordJsonOf(stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): string {
  const { head, body } = stored.record;
  const header = head.toString('utf8', 4);
  const { encoding, quoted } = jsonBodyOf(body);
  const fields = header.length > 2 ? `${header.slice(1, -1)},` : '';
  return `{"seq":${stored.seq},${fields}"body":${quoted},"bodyEncoding":"${encoding}","answer":${stored.answer}}`;
}

/** The v1 `request` message of a stored request. */
export const v1RequestMessage = (stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): string =>
  `{"type":"request","request":${recordJsonOf(stored)}}`;

/** The stored request as the record object clients read. */
export const capturedRequestOf = (stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): CapturedRequest =>
  JSON.parse(recordJsonOf(stored)) as CapturedRequest;
