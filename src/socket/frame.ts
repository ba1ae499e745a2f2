import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { REQUEST_FRAME_KIND, REQUEST_FRAME_SEQ_BYTES } from '../shared/request-frame.js';

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
  return frameOf(0x81, Buffer.alloc(0), payload);
}

/**
 * A v2 `request` message (shared/request-frame.ts) as a binary frame: kind, seq and answer in
 * front of the record, which is written from the store's own bytes, not encoded again.
 */
export function requestFrame(seq: number, answer: string, record: Buffer): Frame {
  const answerBytes = Buffer.byteLength(answer);
  const lead = Buffer.allocUnsafe(REQUEST_FRAME_SEQ_BYTES + 4 + answerBytes);
  lead[0] = REQUEST_FRAME_KIND;
  lead.writeUInt32BE(Math.floor(seq / 2 ** 32), 1);
  lead.writeUInt32BE(seq % 2 ** 32, 5);
  lead.writeUInt32BE(answerBytes, REQUEST_FRAME_SEQ_BYTES);
  lead.write(answer, REQUEST_FRAME_SEQ_BYTES + 4, 'utf8');
  return frameOf(0x82, lead, record);
}

/** One unmasked final frame of `opcode` whose payload is `lead` then `payload`. */
function frameOf(opcode: number, lead: Buffer, payload: Buffer): Frame {
  const length = lead.length + payload.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const copy = length < COPY_BELOW_BYTES;
  const head = Buffer.allocUnsafe(headerLength + (copy ? length : lead.length));
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
  lead.copy(head, headerLength);
  if (copy) {
    payload.copy(head, headerLength + lead.length);
    return { chunks: [head], length: head.length };
  }
  return { chunks: [head, payload], length: headerLength + length };
}

/**
 * The TCP socket under a ws WebSocket. ws keeps it in a private field; the hub corks it and
 * writes shared frames to it. Undefined when absent, and callers then fall back to ws's API.
 */
export function tcpSocketOf(socket: WebSocket): Duplex | undefined {
  return (socket as unknown as { _socket?: Duplex })._socket;
}
