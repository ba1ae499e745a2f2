import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { Bus } from '../bus/bus.js';
import type { Store } from '../store/store.js';
import { tcpSocketOf } from './frame.js';
import { EXPIRED_MESSAGE } from './server-messages.js';
import { toFramed, type Watcher } from './watcher.js';

export interface HubOptions {
  store: Store;
  bus: Bus;
  graceMs: number;
  maxWatchersPerEndpoint: number;
  log: FastifyBaseLogger;
  /** Called after a captured request was handed to an endpoint's local watchers. */
  onDelivered?: (capturedAtMs: number) => void;
}

/** Messages after which the watcher sockets are flushed without waiting for the turn to end. */
export const FLUSH_AFTER_MESSAGES = 8;

interface Channel {
  watchers: Set<Watcher>;
  /** The bus subscription; attaches wait for it. */
  subscribed: Promise<void>;
  graceTimer: NodeJS.Timeout | undefined;
}

export type AttachResult = 'attached' | 'full' | 'failed';

export interface Hub {
  /**
   * Adds a watcher to an endpoint, subscribing this instance to its bus messages on the first
   * one. Resolves once messages flow to the watcher: 'full' when the endpoint is at its watcher
   * cap, 'failed' when the bus could not subscribe (nothing is kept then).
   */
  attach(endpointId: string, watcher: Watcher): Promise<AttachResult>;
  /** Removes a watcher; after the last one leaves, the endpoint is purged once the grace passes. */
  detach(endpointId: string, watcher: Watcher): void;
  /** Local watchers of one endpoint (for tests and metrics). */
  watcherCount(endpointId: string): number;
  /** Local watchers of every endpoint. */
  watcherTotal(): number;
  /** Endpoints with at least one local watcher or a pending purge. */
  channelCount(): number;
  /** Stops every timer and subscription. Endpoints are not purged: another instance may own them. */
  close(): Promise<void>;
}

/**
 * The per-instance registry of sockets watching endpoints. It owns the live endpoint's
 * lifetime: an endpoint lives while a watcher is attached, plus `graceMs` after the last leaves,
 * so a reload or a reconnect keeps it and its log.
 */
export function createHub(options: HubOptions): Hub {
  const { store, bus, log } = options;
  const channels = new Map<string, Channel>();
  let watcherTotal = 0;

  // Under load several requests reach one socket close together. Its TCP socket stays corked
  // until the next flush, which sends what queued up in one write instead of one syscall per
  // message. A flush happens at the end of the event-loop turn, or sooner once a turn has queued
  // FLUSH_AFTER_MESSAGES messages and at least one per corked socket: a busy turn lasts
  // milliseconds (tens of requests), and its first message should not wait for all of it, but
  // an early flush must still carry at least one message per write it makes (100 watchers of
  // one endpoint: after 100 messages, i.e. in practice once per turn).
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
  const cork = (socket: WebSocket) => {
    const tcp = tcpSocketOf(socket);
    if (!tcp || corked.has(tcp)) return;
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushAtTurnEnd);
    }
    tcp.cork();
    corked.add(tcp);
  };

  // One bus handler for every endpoint: a live endpoint costs a map entry, not a listener.
  bus.onMessage((endpointId, message) => {
    const channel = channels.get(endpointId);
    if (!channel) return;
    // Encode and frame once for every watcher (ws would otherwise do both once per socket).
    const framed = toFramed(message.data, message.seq);
    for (const watcher of channel.watchers) {
      cork(watcher.socket);
      watcher.deliver(framed);
    }
    if (++queuedMessages >= FLUSH_AFTER_MESSAGES && queuedMessages >= corked.size) flush();
    if (message.capturedAtMs !== undefined) options.onDelivered?.(message.capturedAtMs);
  });

  function openChannel(endpointId: string): Channel {
    const channel: Channel = { watchers: new Set(), graceTimer: undefined, subscribed: bus.subscribe(endpointId) };
    channels.set(endpointId, channel);
    return channel;
  }

  async function purge(endpointId: string, channel: Channel): Promise<void> {
    if (channels.get(endpointId) !== channel || channel.watchers.size > 0) return;
    channels.delete(endpointId);
    try {
      // Issued before any await, so a watcher arriving meanwhile subscribes after it, not before.
      await bus.unsubscribe(endpointId);
      if (await store.deleteEndpoint(endpointId)) {
        log.debug({ endpointId }, 'endpoint purged');
        await bus.publish(endpointId, { data: EXPIRED_MESSAGE });
      }
    } catch (error) {
      log.error({ err: error, endpointId }, 'purging endpoint failed');
    }
  }

  function leave(endpointId: string, channel: Channel): void {
    if (channel.watchers.size > 0 || channels.get(endpointId) !== channel) return;
    if (options.graceMs === 0) {
      void purge(endpointId, channel);
      return;
    }
    clearTimeout(channel.graceTimer);
    channel.graceTimer = setTimeout(() => void purge(endpointId, channel), options.graceMs);
    channel.graceTimer.unref();
  }

  return {
    async attach(endpointId, watcher) {
      const channel = channels.get(endpointId) ?? openChannel(endpointId);
      if (channel.watchers.size >= options.maxWatchersPerEndpoint) return 'full';
      clearTimeout(channel.graceTimer);
      channel.graceTimer = undefined;
      // Counted at once so concurrent attaches respect the cap; taken back if the bus fails.
      channel.watchers.add(watcher);
      watcherTotal++;
      try {
        await channel.subscribed;
        return 'attached';
      } catch (error) {
        log.error({ err: error, endpointId }, 'bus subscribe failed');
        if (channel.watchers.delete(watcher)) watcherTotal--;
        // The next attach tries again with a fresh subscription.
        if (channels.get(endpointId) === channel && channel.watchers.size === 0) channels.delete(endpointId);
        return 'failed';
      }
    },

    detach(endpointId, watcher) {
      const channel = channels.get(endpointId);
      if (!channel || !channel.watchers.delete(watcher)) return;
      watcherTotal--;
      leave(endpointId, channel);
    },

    watcherCount: (endpointId) => channels.get(endpointId)?.watchers.size ?? 0,

    watcherTotal: () => watcherTotal,

    channelCount: () => channels.size,

    async close() {
      const all = new Map(channels);
      channels.clear();
      for (const channel of all.values()) clearTimeout(channel.graceTimer);
      await Promise.allSettled([...all.keys()].map((endpointId) => bus.unsubscribe(endpointId)));
    },
  };
}
