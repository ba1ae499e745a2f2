import type { WebSocket } from 'ws';
import { tcpSocketOf } from './frame.js';

/** A message on its way to watchers: encoded once, then written to every socket as a text frame. */
export interface Outgoing {
  seq?: number;
  data: string | Buffer;
  /** `data` as a complete text frame, shared by every watcher of a live message. */
  frame?: Buffer;
}

/**
 * One socket watching one endpoint. Delivers each request at most once, in order (by seq), and
 * holds live messages back while the backlog is being sent, so a join or resume has no gap and
 * no repeat. A socket that falls more than `maxBufferBytes` behind is terminated: it reconnects
 * and resumes from its last seq instead of growing server memory.
 */
export class Watcher {
  /** Highest request seq sent to this socket. */
  lastSeq = 0;
  private held: Outgoing[] | undefined = [];
  private heldBytes = 0;

  constructor(
    readonly socket: WebSocket,
    readonly endpointId: string,
    private readonly maxBufferBytes: number,
    /** Shared by every watcher (one function, not a closure per socket). */
    private readonly onSlow: (watcher: Watcher) => void,
  ) {}

  /** Called by the hub for every message on the endpoint. */
  deliver(message: Outgoing): void {
    if (this.held) {
      this.heldBytes += message.data.length;
      if (this.heldBytes > this.maxBufferBytes) return this.dropSlow();
      this.held.push(message);
      return;
    }
    this.sendMessage(message);
  }

  /** Sends the backlog (paced by the socket's drain), then everything held back meanwhile. */
  async replay(backlog: Iterable<Outgoing>): Promise<void> {
    for (const message of backlog) {
      if (this.socket.readyState !== this.socket.OPEN) return;
      if (this.socket.bufferedAmount > this.maxBufferBytes / 2) await this.drained();
      this.sendMessage(message);
    }
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    for (const message of held) this.sendMessage(message);
  }

  send(data: string | Buffer): void {
    if (this.writable()) this.socket.send(data, { binary: false });
  }

  private sendMessage(message: Outgoing): void {
    if (message.seq !== undefined) {
      if (message.seq <= this.lastSeq) return;
      this.lastSeq = message.seq;
    }
    if (message.frame === undefined) return this.send(message.data);
    if (!this.writable()) return;
    // The frame is already built: write its bytes rather than have ws frame it again. Safe
    // because ws writes each frame whole and, without compression, never queues its own.
    const tcp = tcpSocketOf(this.socket);
    if (tcp) tcp.write(message.frame);
    else this.socket.send(message.data, { binary: false });
  }

  /** Open, and not too far behind; a socket too far behind is dropped. */
  private writable(): boolean {
    if (this.socket.readyState !== this.socket.OPEN) return false;
    // Judge by what is still unsent, not by this message: one message larger than the cap is
    // fine for a reader that keeps up. bufferedAmount counts bytes written to the TCP socket too.
    if (this.socket.bufferedAmount > this.maxBufferBytes) {
      this.dropSlow();
      return false;
    }
    return true;
  }

  private drained(): Promise<void> {
    // ws calls a send callback once that frame is handed to the OS: an empty ping is a cheap marker.
    return new Promise((resolve) => this.socket.ping(undefined, undefined, () => resolve()));
  }

  private dropSlow(): void {
    this.held = undefined;
    this.onSlow(this);
    // A close frame would queue behind the very bytes that did not drain, so cut the connection;
    // the client sees an abnormal close (1006), reconnects and resumes from its last seq.
    this.socket.terminate();
  }
}
