import { nanoid } from 'nanoid';
import type { WebSocket } from 'ws';
import type { ProtocolVersion } from '../shared/protocol.js';
import { v1RequestMessage, type StoredRequest } from '../store/stored-request.js';
import { requestFrame, tcpSocketOf, textFrame, type Frame } from './frame.js';

/**
 * A message on its way to watchers: framed once per protocol version that asks for it, then the
 * same bytes written to every socket of that version.
 */
export interface Framed {
  seq?: number;
  frameFor(version: ProtocolVersion): Frame;
}

/** Any message but `request`: the same text frame for both versions. */
export function toFramed(data: Buffer | string): Framed {
  const frame = textFrame(data);
  return { frameFor: () => frame };
}

/**
 * A `request`: the stored bytes in one binary frame for v2, and the JSON text of v1 built from
 * them only when a v1 socket asks, once.
 */
export function requestFramed(stored: Pick<StoredRequest, 'seq' | 'answer' | 'record'>): Framed {
  let v2: Frame | undefined;
  let v1: Frame | undefined;
  return {
    seq: stored.seq,
    frameFor: (version) =>
      version === 2
        ? (v2 ??= requestFrame(stored.seq, stored.answer, stored.record))
        : (v1 ??= textFrame(v1RequestMessage(stored))),
  };
}

/**
 * One socket watching one endpoint. Delivers each request at most once, in order (by seq), and
 * holds live messages back while the backlog is being sent, so a join or resume has no gap and
 * no repeat. Every write, replies and errors included, first checks how far the socket is
 * behind: past `maxBufferBytes` it is terminated, and it reconnects and resumes from its last seq
 * instead of growing server memory. No single message is larger than half the cap (config.ts
 * checks the largest record against it), so a reader that keeps up is never cut by one message.
 */
export class Watcher {
  /** Highest request seq sent to this socket. */
  lastSeq = 0;
  /** Names this watcher on the bus, so a replay's progress reaches the tab that asked, on any instance. */
  readonly id = nanoid(12);
  /** The socket announced itself a forwarder (`hookwatch forward`): page replays go to it. */
  forwarder = false;
  /** Takes the messages meant for this watcher alone (`direct`), before they are written; unset: written as they are. */
  onDirect: ((data: Buffer | string) => void) | undefined;
  private held: Framed[] | undefined = [];
  private heldBytes = 0;

  constructor(
    readonly socket: WebSocket,
    readonly endpointId: string,
    readonly version: ProtocolVersion,
    private readonly maxBufferBytes: number,
    /** Shared by every watcher (one function, not a closure per socket). */
    private readonly onSlow: (watcher: Watcher) => void,
  ) {}

  /** Called by the hub for every message on the endpoint. */
  deliver(message: Framed): void {
    if (this.held) {
      this.heldBytes += message.frameFor(this.version).length;
      if (this.heldBytes > this.maxBufferBytes) return this.dropSlow();
      this.held.push(message);
      return;
    }
    this.write(message);
  }

  /** A message for this watcher alone (a replay's progress): through `onDirect` when set. */
  direct(data: Buffer | string): void {
    if (this.onDirect) this.onDirect(data);
    else this.write(toFramed(data));
  }

  /** Sends the backlog (paced by the socket's drain), then everything held back meanwhile. */
  async replay(backlog: Iterable<Framed>): Promise<void> {
    for (const message of backlog) {
      if (this.socket.readyState !== this.socket.OPEN) return;
      if (this.socket.bufferedAmount > this.maxBufferBytes / 2) await this.drained();
      this.write(message);
    }
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    for (const message of held) this.write(message);
  }

  /** The endpoint is gone: says so (`expired`, ahead of anything held back) and closes with 4004. */
  expire(expired: Framed): void {
    this.held = undefined;
    this.write(expired);
    this.socket.close(4004, 'ENDPOINT_NOT_FOUND');
  }

  /** Sends one message now (not held back): replies such as `welcome`. */
  send(data: string): void {
    this.write(toFramed(data));
  }

  private write(message: Framed): void {
    if (message.seq !== undefined) {
      if (message.seq <= this.lastSeq) return;
      this.lastSeq = message.seq;
    }
    writeBounded(this.socket, message.frameFor(this.version), this.maxBufferBytes, () => this.dropSlow());
  }

  private drained(): Promise<void> {
    // ws calls a send callback once that frame is handed to the OS: an empty ping is a cheap marker.
    return new Promise((resolve) => this.socket.ping(undefined, undefined, () => resolve()));
  }

  private dropSlow(): void {
    this.held = undefined;
    this.onSlow(this);
    this.socket.terminate();
  }
}

/**
 * Writes a ready frame to an open socket unless the socket is already more than `maxBufferBytes`
 * behind, in which case `onSlow` runs (and the caller cuts the connection: a close frame would
 * queue behind the very bytes that did not drain, so the client sees 1006 and resumes).
 * The frame's bytes go straight to the TCP socket: ws writes each frame whole and, without
 * compression, never queues its own, so this is what `ws.send` would do minus framing again.
 */
export function writeBounded(socket: WebSocket, frame: Frame, maxBufferBytes: number, onSlow: () => void): void {
  if (socket.readyState !== socket.OPEN) return;
  // Judge by what is still unsent, not by this message. bufferedAmount counts bytes written to
  // the TCP socket too.
  if (socket.bufferedAmount > maxBufferBytes) return onSlow();
  const tcp = tcpSocketOf(socket);
  if (tcp) {
    for (const chunk of frame.chunks) tcp.write(chunk);
  } else {
    const head = frame.chunks[0] as Buffer;
    socket.send(Buffer.concat(frame.chunks).subarray(headerLength(head)), { binary: head[0] === 0x82 });
  }
}

function headerLength(head: Buffer): number {
  const marker = (head[1] as number) & 0x7f;
  return marker < 126 ? 2 : marker === 126 ? 4 : 10;
}
