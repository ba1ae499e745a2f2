import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { Bus, BusMessage } from '../bus/bus.js';
import type { Store } from '../store/store.js';
import { tcpSocketOf, textFrame } from './frame.js';
import type { Watcher } from './watcher.js';

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
  /** Set while the bus subscription is being made; attaches wait for it. */
  subscribing: Promise<void> | undefined;
  graceTimer: NodeJS.Timeout | undefined;
}

export interface Hub {
  /**
   * Adds a watcher to an endpoint, subscribing this instance to its bus messages on the first
   * one. Resolves once messages flow to the watcher; false when the endpoint is at its watcher cap.
   */
  attach(endpointId: string, watcher: Watcher): Promise<boolean>;
  /** Removes a watcher; after the last one leaves, the endpoint is purged once the grace passes. */
  detach(endpointId: string, watcher: Watcher): void;
  /** Sends a message to every watcher of the endpoint on every instance. */
  publish(endpointId: string, message: BusMessage): Promise<void>;
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
    const frame = textFrame(message.data);
    const outgoing = { seq: message.seq, data: frame.payload, frame: frame.bytes };
    for (const watcher of channel.watchers) {
      cork(watcher.socket);
      watcher.deliver(outgoing);
    }
    if (++queuedMessages >= FLUSH_AFTER_MESSAGES && queuedMessages >= corked.size) flush();
    if (message.capturedAtMs !== undefined) options.onDelivered?.(message.capturedAtMs);
  });

  function openChannel(endpointId: string): Channel {
    const channel: Channel = { watchers: new Set(), graceTimer: undefined, subscribing: undefined };
    channels.set(endpointId, channel);
    const subscribing = bus.subscribe(endpointId);
    channel.subscribing = subscribing;
    subscribing.then(
      () => {
        channel.subscribing = undefined;
      },
      (error: unknown) => log.error({ err: error, endpointId }, 'bus subscribe failed'),
    );
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
        await bus.publish(endpointId, { data: '{"type":"expired"}' });
      }
    } catch (error) {
      log.error({ err: error, endpointId }, 'purging endpoint failed');
    }
  }

  return {
    async attach(endpointId, watcher) {
      const channel = channels.get(endpointId) ?? openChannel(endpointId);
      if (channel.watchers.size >= options.maxWatchersPerEndpoint) return false;
      clearTimeout(channel.graceTimer);
      channel.graceTimer = undefined;
      channel.watchers.add(watcher);
      watcherTotal++;
      await channel.subscribing;
      return true;
    },

    detach(endpointId, watcher) {
      const channel = channels.get(endpointId);
      if (!channel || !channel.watchers.delete(watcher)) return;
      watcherTotal--;
      if (channel.watchers.size > 0) return;
      if (options.graceMs === 0) {
        void purge(endpointId, channel);
        return;
      }
      channel.graceTimer = setTimeout(() => void purge(endpointId, channel), options.graceMs);
      channel.graceTimer.unref();
    },

    publish: (endpointId, message) => bus.publish(endpointId, message),

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
