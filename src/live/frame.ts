import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * A server-to-client WebSocket text frame (RFC 6455 section 5.2: FIN, opcode 1, no mask), built
 * once per message so the hub can write the same bytes to every watcher's TCP socket instead of
 * having ws frame the message again for each one.
 */
export interface TextFrame {
  /** Header and payload, ready to write. */
  bytes: Buffer;
  /** The UTF-8 payload alone (a view into `bytes`). */
  payload: Buffer;
}

export function textFrame(text: string | Buffer): TextFrame {
  const length = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const bytes = Buffer.allocUnsafe(headerLength + length);
  bytes[0] = 0x81;
  if (length < 126) {
    bytes[1] = length;
  } else if (length < 65536) {
    bytes[1] = 126;
    bytes.writeUInt16BE(length, 2);
  } else {
    bytes[1] = 127;
    bytes.writeBigUInt64BE(BigInt(length), 2);
  }
  if (typeof text === 'string') bytes.write(text, headerLength, 'utf8');
  else text.copy(bytes, headerLength);
  return { bytes, payload: bytes.subarray(headerLength) };
}

/**
 * The TCP socket under a ws WebSocket. ws keeps it in a private field; the hub corks it and
 * writes shared frames to it. Undefined when absent, and callers then fall back to ws's API.
 */
export function tcpSocketOf(socket: WebSocket): Duplex | undefined {
  return (socket as unknown as { _socket?: Duplex })._socket;
}
