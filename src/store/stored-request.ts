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
  record: Buffer;
  /** The latest `forwarded` message a forwarder reported for it, when there is one (readLog only). */
  forwarded?: string;
}

/** A record (shared/request-frame.ts): u32 header length, the header's JSON, the body's bytes. One buffer of its own. */
export function encodeRecord(headerJson: string, body: Uint8Array): Buffer {
  const headerBytes = Buffer.byteLength(headerJson);
  const record = Buffer.allocUnsafeSlow(4 + headerBytes + body.length);
  record.writeUInt32BE(headerBytes, 0);
  record.write(headerJson, 4, 'utf8');
  record.set(body, 4 + headerBytes);
  return record;
}

/**
 * A request's bytes as one stored value (a Redis list element, an SQLite row): u32 answer
 * length, the answer's JSON, the record. Its length is what every backend counts
 * (log/rulebook.ts, storedCost).
 */
export function toElement(answer: string, record: Buffer): Buffer {
  const answerBytes = Buffer.byteLength(answer);
  const element = Buffer.allocUnsafeSlow(4 + answerBytes + record.length);
  element.writeUInt32BE(answerBytes, 0);
  element.write(answer, 4, 'utf8');
  record.copy(element, 4 + answerBytes);
  return element;
}

/** Bytes of `toElement(answer, record)`, without building it. */
export const elementLength = (answer: string, record: Buffer): number => 4 + Buffer.byteLength(answer) + record.length;

/**
 * The request held in a stored value: an element, or a whole v1 `request` message as stores
 * kept before records were bytes (it starts with `{`, which no element does: an answer's length
 * is far below 2^24). The record is a view into `element`, not a copy.
 */
export function fromElement(seq: number, element: Buffer, forwarded?: string): StoredRequest {
  if (element[0] === 0x7b) return fromV1Message(element, forwarded);
  const answerEnd = element.length < 8 ? Infinity : 4 + element.readUInt32BE(0);
  if (answerEnd + 4 > element.length) throw new Error(`stored request ${seq}: not an element`);
  const stored: StoredRequest = {
    seq,
    answer: element.toString('utf8', 4, answerEnd),
    record: element.subarray(answerEnd),
  };
  if (forwarded !== undefined) stored.forwarded = forwarded;
  return stored;
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
  const { record } = stored;
  const headerEnd = 4 + record.readUInt32BE(0);
  const header = record.toString('utf8', 4, headerEnd);
  const { encoding, quoted } = jsonBodyOf(record.subarray(headerEnd));
  const fields = header.length > 2 ? `${header.slice(1, -1)},` : '';
  return `{"seq":${stored.seq},${fields}"body":${quoted},"bodyEncoding":"${encoding}","answer":${stored.answer}}`;
}

/** The v1 `request` message of a stored request. */
export const v1RequestMessage = (stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): string =>
  `{"type":"request","request":${recordJsonOf(stored)}}`;

/** The stored request as the record object clients read. */
export const capturedRequestOf = (stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): CapturedRequest =>
  JSON.parse(recordJsonOf(stored)) as CapturedRequest;
