import type { FastifyBaseLogger } from 'fastify';
import type { Bus } from '../bus/bus.js';
import type { Store } from '../store/store.js';
import { createCorking } from './corking.js';
import { EXPIRED_MESSAGE, responderMessage } from '../shared/server-messages.js';
import { requestFramed, toFramed, type Framed, type Watcher } from './watcher.js';
import type { EndpointEvents, EndpointListener } from '../endpoints/waits.js';

export interface HubOptions {
  store: Store;
  bus: Bus;
  /** This instance, as the holder of leases on the endpoints its sockets watch. */
  instanceId: string;
  /** How long a lease lasts; renewed every third of it. */
  leaseMs: number;
  graceMs: number;
  maxWatchersPerEndpoint: number;
  log: FastifyBaseLogger;
  /** Called after a captured request was handed to an endpoint's local watchers. */
  onDelivered?: (capturedAtMs: number) => void;
}

interface Channel {
  watchers: Set<Watcher>;
  /** The bus subscription and this instance's lease; attaches wait for them. */
  ready: Promise<void>;
  /** Highest request seq that reached this channel (from the bus or a fill), for hole detection. */
  lastSeq: number | undefined;
  /** While set, a fill from the store is running: live messages wait in it. */
  filling: Framed[] | undefined;
  /** Whoever else listens to the endpoint's events: long polls and senders waiting (endpoints/waits.ts). */
  listeners: Set<EndpointListener>;
  /** The senders among them, by the request they wait on: a local answer goes to its own, not past every listener. */
  answerListeners: Map<number, EndpointListener>;
}

export type AttachResult = 'attached' | 'full' | 'gone' | 'failed';

export interface Hub extends EndpointEvents {
  /**
   * Adds a watcher to an endpoint, subscribing this instance to its bus messages on the first
   * one. Resolves once messages flow to the watcher: 'full' when the endpoint is at its watcher
   * cap, 'failed' when the bus could not subscribe (nothing is kept then).
   */
  attach(endpointId: string, watcher: Watcher): Promise<AttachResult>;
  /** Removes a watcher; after this instance's last one leaves, it gives its lease back. */
  detach(endpointId: string, watcher: Watcher): void;
  /** Local watchers of one endpoint (for tests and metrics). */
  watcherCount(endpointId: string): number;
  /** Local watchers of every endpoint. */
  watcherTotal(): number;
  /** Endpoints with at least one local watcher. */
  channelCount(): number;
  /** Renews this instance's leases now, telling watchers of endpoints that are gone (also runs on a timer). */
  renewLeases(): Promise<void>;
  /** Stops every timer and subscription. Leases are not given back: the grace covers a restart. */
  close(): Promise<void>;
}

/**
 * The per-instance registry of sockets watching endpoints: local sockets only. The endpoint's
 * lifetime is the store's: the hub holds a lease on each endpoint it has watchers for, renews
 * it, gives it back when its last watcher leaves, and tells its watchers when the store says an
 * endpoint is gone. Messages arrive from the bus in seq order per endpoint; a hole (a message
 * lost while the bus reconnected) is filled from the store before later ones are delivered.
 */
export function createHub(options: HubOptions): Hub {
  const { store, bus, log } = options;
  const channels = new Map<string, Channel>();
  let watcherTotal = 0;

  const corking = createCorking();

  // One bus handler for every endpoint: a live endpoint costs a map entry, not a listener.
  bus.onMessage((endpointId, message) => {
    const channel = channels.get(endpointId);
    if (!channel) return;
    const { request, data = '' } = message;
    if (request !== undefined && message.seq !== undefined) {
      // Copied only when someone listens: most channels have watchers alone, and this runs per request.
      if (channel.listeners.size > 0) for (const listener of [...channel.listeners]) listener.request?.();
      // Framed once per protocol version for every watcher (ws would otherwise do it once per socket).
      deliver(endpointId, channel, requestFramed({ seq: message.seq, answer: request.answer, record: request.record }));
      corking.counted();
      if (message.capturedAtMs !== undefined) options.onDelivered?.(message.capturedAtMs);
      return;
    }
    // Gone (deleted on any instance): tell the watchers why and close their sockets now.
    if (message.ends) return expireLocal(endpointId, data);
    if (message.answerFor !== undefined) {
      channel.answerListeners.get(message.answerFor)?.answer?.(data);
      return;
    }
    if (message.toForwarders) return deliverToForwarders(channel, data);
    if (message.toWatcher !== undefined) return deliverToWatcher(channel, message.toWatcher, data);
    if (channel.listeners.size > 0 && isNoResponder(data))
      for (const listener of [...channel.listeners]) listener.noResponder?.();
    deliver(endpointId, channel, toFramed(data));
    corking.counted();
  });

  function openChannel(endpointId: string): Channel {
    const channel: Channel = {
      watchers: new Set(),
      ready: Promise.resolve(),
      lastSeq: undefined,
      filling: undefined,
      listeners: new Set(),
      answerListeners: new Map(),
    };
    channel.ready = Promise.all([
      bus.subscribe(endpointId),
      store.holdEndpoints([endpointId], options.instanceId, Date.now() + options.leaseMs, options.graceMs),
    ]).then(([, gone]) => {
      if (gone.length > 0) throw new EndpointGoneError();
    });
    channels.set(endpointId, channel);
    return channel;
  }

  function closeChannel(endpointId: string, channel: Channel, release: boolean): void {
    if (channels.get(endpointId) !== channel) return;
    channels.delete(endpointId);
    bus
      .unsubscribe(endpointId)
      .catch((error: unknown) => log.warn({ err: error, endpointId }, 'bus unsubscribe failed'));
    if (release) {
      store
        .releaseEndpoint(endpointId, options.instanceId, options.graceMs)
        .catch((error: unknown) => log.warn({ err: error, endpointId }, 'giving a lease back failed'));
    }
  }

  /** Closes a channel nobody uses any more: no watcher, no long poll, no sender waiting. */
  function closeWhenUnused(endpointId: string, channel: Channel): void {
    if (channel.watchers.size === 0 && channel.listeners.size === 0) closeChannel(endpointId, channel, true);
  }

  /** Tells every local watcher of a gone endpoint (4004) with `message`; their sockets then close. */
  function expireLocal(endpointId: string, message: Buffer | string = EXPIRED_MESSAGE): void {
    const channel = channels.get(endpointId);
    if (!channel) return;
    closeChannel(endpointId, channel, false);
    const expired = toFramed(message);
    for (const watcher of channel.watchers) watcher.expire(expired);
    watcherTotal -= channel.watchers.size;
    channel.watchers.clear();
    for (const listener of [...channel.listeners]) listener.gone?.();
  }

  /** Hands a message to the channel's watchers, filling a hole from the store first. */
  function deliver(endpointId: string, channel: Channel, framed: Framed): void {
    if (channel.filling) {
      channel.filling.push(framed);
      return;
    }
    if (framed.seq !== undefined) {
      if (channel.lastSeq !== undefined && framed.seq > channel.lastSeq + 1) {
        channel.filling = [framed];
        void fill(endpointId, channel);
        return;
      }
      channel.lastSeq = Math.max(channel.lastSeq ?? 0, framed.seq);
    }
    for (const watcher of channel.watchers) {
      corking.cork(watcher.socket);
      watcher.deliver(framed);
    }
  }

  /** A page's replay order: to the local watchers that forward (`hookwatch forward`), no one else. */
  function deliverToForwarders(channel: Channel, data: Buffer | string): void {
    let framed: Framed | undefined;
    for (const watcher of channel.watchers) {
      if (!watcher.forwarder) continue;
      framed ??= toFramed(data);
      watcher.deliver(framed);
    }
  }

  /** A replay's progress: to the one watcher (tab) that asked, when it is on this instance. */
  function deliverToWatcher(channel: Channel, watcherId: string, data: Buffer | string): void {
    for (const watcher of channel.watchers) if (watcher.id === watcherId) return watcher.direct(data);
  }

  /** Reads what the channel missed from the store and delivers it, then what waited meanwhile. */
  async function fill(endpointId: string, channel: Channel): Promise<void> {
    const after = refillFrom(channel);
    try {
      const log = await store.readLog(endpointId, after);
      if (log === undefined) return expireLocal(endpointId);
      const waiting = channel.filling ?? [];
      channel.filling = undefined;
      for (const stored of log.requests) deliver(endpointId, channel, requestFramed(stored));
      // What the store no longer has (trimmed or evicted) is not a hole to fill again.
      channel.lastSeq = Math.max(channel.lastSeq ?? 0, (waiting[0]?.seq ?? after + 1) - 1, log.clearedSeq);
      for (const framed of waiting) deliver(endpointId, channel, framed);
    } catch (error) {
      // Tried again until the store answers or nobody watches: what waits now is in the store
      // too, so it is dropped rather than held without bound, and read again.
      log.warn({ err: error, endpointId }, 'filling a gap from the store failed; trying again');
      channel.filling = [];
      const retry = setTimeout(() => {
        if (channels.get(endpointId) === channel) void fill(endpointId, channel);
      }, FILL_RETRY_MS);
      retry.unref();
    }
  }

  /** Where a refill starts: what the channel last delivered, or before what its watchers hold (a channel that has carried nothing live yet). */
  function refillFrom(channel: Channel): number {
    if (channel.lastSeq !== undefined) return channel.lastSeq;
    let from = Number.MAX_SAFE_INTEGER;
    for (const watcher of channel.watchers) from = Math.min(from, watcher.lastSeq);
    return from === Number.MAX_SAFE_INTEGER ? 0 : from;
  }

  /** Records this instance's watcher count; the store tells every watcher everywhere the new total. */
  function announceWatchers(endpointId: string): void {
    const local = channels.get(endpointId)?.watchers.size ?? 0;
    store
      .countWatchers(endpointId, options.instanceId, local)
      .catch((error: unknown) => log.warn({ err: error, endpointId }, 'counting watchers failed'));
  }

  async function renewLeases(): Promise<void> {
    const ids = [...channels.keys()];
    if (ids.length === 0) return;
    try {
      const gone = await store.holdEndpoints(ids, options.instanceId, Date.now() + options.leaseMs, options.graceMs);
      for (const endpointId of gone) expireLocal(endpointId);
    } catch (error) {
      log.warn({ err: error }, 'renewing leases failed; retrying at the next renewal');
    }
  }
  const renewal = setInterval(() => void renewLeases(), Math.max(250, Math.floor(options.leaseMs / 3)));
  renewal.unref();

  // After the bus reconnects, anything published meanwhile was lost to it: fill every channel,
  // one that has carried nothing live yet included (from what its watchers hold).
  bus.onReconnect(() => {
    for (const [endpointId, channel] of channels) {
      if (channel.filling || channel.watchers.size === 0) continue;
      channel.filling = [];
      void fill(endpointId, channel);
    }
  });

  return {
    async attach(endpointId, watcher) {
      const channel = channels.get(endpointId) ?? openChannel(endpointId);
      if (channel.watchers.size >= options.maxWatchersPerEndpoint) return 'full';
      // Counted at once so concurrent attaches respect the cap; taken back if the bus or store fails.
      channel.watchers.add(watcher);
      watcherTotal++;
      try {
        await channel.ready;
        announceWatchers(endpointId);
        return 'attached';
      } catch (error) {
        if (channel.watchers.delete(watcher)) watcherTotal--;
        // The next attach tries again with a fresh subscription and lease.
        if (channel.watchers.size === 0) closeChannel(endpointId, channel, false);
        if (error instanceof EndpointGoneError) return 'gone';
        log.error({ err: error, endpointId }, 'bus subscribe or lease failed');
        return 'failed';
      }
    },

    detach(endpointId, watcher) {
      const channel = channels.get(endpointId);
      if (!channel || !channel.watchers.delete(watcher)) return;
      watcherTotal--;
      announceWatchers(endpointId);
      closeWhenUnused(endpointId, channel);
    },

    listen(endpointId, listener) {
      const channel = channels.get(endpointId) ?? openChannel(endpointId);
      channel.listeners.add(listener);
      const { answerFor } = listener;
      if (answerFor !== undefined) channel.answerListeners.set(answerFor, listener);
      const ready = channel.ready.then(
        () => 'ready' as const,
        (error: unknown) => (error instanceof EndpointGoneError ? ('gone' as const) : ('failed' as const)),
      );
      return {
        ready,
        stop() {
          channel.listeners.delete(listener);
          if (answerFor !== undefined && channel.answerListeners.get(answerFor) === listener)
            channel.answerListeners.delete(answerFor);
          closeWhenUnused(endpointId, channel);
        },
      };
    },

    watcherCount: (endpointId) => channels.get(endpointId)?.watchers.size ?? 0,

    watcherTotal: () => watcherTotal,

    channelCount: () => channels.size,

    renewLeases,

    async close() {
      clearInterval(renewal);
      const ids = [...channels.keys()];
      channels.clear();
      await Promise.allSettled(ids.map((endpointId) => bus.unsubscribe(endpointId)));
    },
  };
}

class EndpointGoneError extends Error {}

/** How soon a refill from the store that failed is tried again. */
const FILL_RETRY_MS = 500;

/** The `responder` message saying nobody answers now: waiting senders get the configured answer at once. */
const NO_RESPONDER = Buffer.from(responderMessage(null));
const isNoResponder = (data: Buffer | string): boolean =>
  typeof data === 'string' ? data === NO_RESPONDER.toString() : NO_RESPONDER.equals(data);
