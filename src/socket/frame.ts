import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * A server-to-client WebSocket text frame (RFC 6455 section 5.2: FIN, opcode 1, no mask), built
 * once per message so the hub can write the same bytes to every watcher's TCP socket instead of
 * having ws frame the message again for each one.
 */
export interface TextFrame {
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

export function textFrame(text: string | Buffer): TextFrame {
  const payload = typeof text === 'string' ? Buffer.from(text) : text;
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const copy = length < COPY_BELOW_BYTES;
  const head = Buffer.allocUnsafe(headerLength + (copy ? length : 0));
  head[0] = 0x81;
  if (length < 126) {
    head[1] = length;
  } else if (length < 65536) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  if (copy) {
    payload.copy(head, headerLength);
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
