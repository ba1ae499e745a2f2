import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { REQUEST_FRAME_KIND, REQUEST_FRAME_SEQ_BYTES } from '../shared/request-frame.js';
import type { RecordBytes } from '../store/stored-request.js';

/**
 * A server-to-client WebSocket frame (RFC 6455 section 5.2: FIN, text or binary, no mask), built
 * once per message so the hub can write the same bytes to every watcher's TCP socket instead of
 * having ws frame the message again for each one.
 */
export interface Frame {
  /**
   * The frame's bytes, to write in order: one buffer (header and payload) for a small message;
   * for a large one the header and then the payload itself, not copied, so a stored request of
   * a megabyte is sent from the store's own bytes.
   */
  chunks: Buffer[];
  /** Bytes in all chunks. */
  length: number;
}

/** Below this a payload is copied behind its header (one write); above it, written as is. */
const COPY_BELOW_BYTES = 16 * 1024;

export function textFrame(text: string | Buffer): Frame {
  const payload = typeof text === 'string' ? Buffer.from(text) : text;
  const { head, at } = frameHead(0x81, 0, payload.length);
  return withPayload(head, at, payload);
}

/**
 * A v2 `request` message (shared/request-frame.ts) as a binary frame: kind, seq, answer and
 * the record's head written behind the frame's header, then the body, from the store's own
 * bytes, not encoded again (and not copied, when large).
 */
export function requestFrame(seq: number, answer: string, record: RecordBytes): Frame {
  const answerBytes = Buffer.byteLength(answer);
  const leadLength = REQUEST_FRAME_SEQ_BYTES + 4 + answerBytes + record.head.length;
  const { head, at } = frameHead(0x82, leadLength, record.body.length);
  head[at] = REQUEST_FRAME_KIND;
  head.writeUInt32BE(Math.floor(seq / 2 ** 32), at + 1);
  head.writeUInt32BE(seq % 2 ** 32, at + 5);
  head.writeUInt32BE(answerBytes, at + REQUEST_FRAME_SEQ_BYTES);
  head.write(answer, at + REQUEST_FRAME_SEQ_BYTES + 4, 'utf8');
  record.head.copy(head, at + REQUEST_FRAME_SEQ_BYTES + 4 + answerBytes);
  return withPayload(head, at + leadLength, record.body);
}

/**
 * The buffer that starts an unmasked final frame of `opcode` whose payload is `leadLength` bytes
 * the caller writes at `at`, then `payloadLength` more: room for those too when they are copied.
 */
function frameHead(opcode: number, leadLength: number, payloadLength: number): { head: Buffer; at: number } {
  const length = leadLength + payloadLength;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const head = Buffer.allocUnsafe(headerLength + (length < COPY_BELOW_BYTES ? length : leadLength));
  head[0] = opcode;
  if (length < 126) {
    head[1] = length;
  } else if (length < 65536) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return { head, at: headerLength };
}

/** The frame: `payload` copied into `head` at `at` when there is room for it there, else written after it as is. */
function withPayload(head: Buffer, at: number, payload: Buffer): Frame {
  if (head.length === at + payload.length) {
    payload.copy(head, at);
    return { chunks: [head], length: head.length };
  }
  return { chunks: [head, payload], length: head.length + payload.length };
}

/**
 * The TCP socket under a ws WebSocket. ws keeps it in a private field; the hub corks it and
 * writes shared frames to it. Undefined when absent, and callers then fall back to ws's API.
 */
export function tcpSocketOf(socket: WebSocket): Duplex | undefined {
  return (socket as unknown as { _socket?: Duplex })._socket;
}
