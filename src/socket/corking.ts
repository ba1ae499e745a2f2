import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { tcpSocketOf } from './frame.js';

/** Messages after which the watcher sockets are flushed without waiting for the turn to end. */
export const FLUSH_AFTER_MESSAGES = 8;

/**
 * Under load several requests reach one socket close together. Its TCP socket stays corked
 * until the next flush, which sends what queued up in one write instead of one syscall per
 * message. A flush happens at the end of the event-loop turn, or sooner once a turn has queued
 * FLUSH_AFTER_MESSAGES messages and at least one per corked socket: a busy turn lasts
 * milliseconds (tens of requests), and its first message should not wait for all of it, but
 * an early flush must still carry at least one message per write it makes (100 watchers of
 * one endpoint: after 100 messages, i.e. in practice once per turn).
 */
export function createCorking(): { cork(socket: WebSocket): void; counted(): void } {
  const corked = new Set<Duplex>();
  let queuedMessages = 0;
  let flushScheduled = false;
  const flush = () => {
    queuedMessages = 0;
    for (const socket of corked) socket.uncork();
    corked.clear();
  };
  const flushAtTurnEnd = () => {
    flushScheduled = false;
    flush();
  };
  return {
    /** Corks the socket's TCP stream until the next flush (a socket without one is left alone). */
    cork(socket) {
      const tcp = tcpSocketOf(socket);
      if (!tcp || corked.has(tcp)) return;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushAtTurnEnd);
      }
      tcp.cork();
      corked.add(tcp);
    },
    /** One message was handed to the corked sockets. */
    counted() {
      if (++queuedMessages >= FLUSH_AFTER_MESSAGES && queuedMessages >= corked.size) flush();
    },
  };
}
