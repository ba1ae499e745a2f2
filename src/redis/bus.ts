import type { Cluster, Redis } from 'ioredis';
import { partitionPrefixes } from './partitions.js';
import type { Bus, BusHandler, BusMessage } from '../bus/bus.js';
import { fromElement, toElement } from '../store/stored-request.js';

export interface RedisBusOptions {
  /** Publishes (any connection main.ts owns; the store's will do). */
  publisher: Redis | Cluster;
  /** A connection of its own: once subscribed, Redis takes only pub/sub commands on it (a Cluster client with sharded subscribers). */
  subscriber: Redis | Cluster;
  /** Channels are `<prefix>{<partition tag>}ch:<endpointId>`, the ones the store's scripts publish on. */
  prefix: string;
  /** As the store has them (redis/partitions.ts). */
  partitions?: number;
  /** Told each request's partition (its prefix) and age: the store's `noteAge`. */
  onAge?: (partition: string, age: number) => void;
}

const NEWLINE = 0x0a;

/**
 * `R <seq> <capturedAtMs>[ <age>]\n<element>` for a captured request (its answer and record as
 * stored: store/stored-request.ts), `X\n<message>` for the last
 * message of an endpoint that is gone, `A <seq>\n<message>` for a local app's answer to
 * request seq's sender, `F\n<message>` for forwarders only, `W <watcher id>\n<message>` for one
 * watcher, `E\n<message>` for any other event: what the hub needs
 * rides in front of the protocol message, which is passed on as the same bytes without being
 * parsed. The store's scripts publish in this form too.
 */
export function encodeBusMessage(message: BusMessage): Buffer | string {
  const head =
    message.seq !== undefined
      ? `R ${message.seq} ${message.capturedAtMs ?? 0}\n`
      : message.answerFor !== undefined
        ? `A ${message.answerFor}\n`
        : message.toForwarders
          ? 'F\n'
          : message.toWatcher !== undefined
            ? `W ${message.toWatcher}\n`
            : message.ends
              ? 'X\n'
              : 'E\n';
  const data = message.request ? toElement(message.request.answer, message.request.record) : (message.data ?? '');
  return typeof data === 'string' ? head + data : Buffer.concat([Buffer.from(head), data]);
}

export function decodeBusMessage(payload: Buffer): BusMessage | undefined {
  const newline = payload.indexOf(NEWLINE);
  if (newline === -1) return undefined;
  const data = payload.subarray(newline + 1);
  if (payload[0] === 0x58 /* X */) return { data, ends: true };
  if (payload[0] === 0x41 /* A */) return { data, answerFor: Number(payload.toString('latin1', 2, newline)) };
  if (payload[0] === 0x46 /* F */) return { data, toForwarders: true };
  if (payload[0] === 0x57 /* W */) return { data, toWatcher: payload.toString('latin1', 2, newline) };
  if (payload[0] !== 0x52 /* R */) return { data };
  const [, seq, capturedAtMs, age] = payload.toString('latin1', 0, newline).split(' ');
  let request;
  try {
    request = fromElement(Number(seq), data);
  } catch {
    return undefined;
  }
  const { answer, record } = request;
  const message: BusMessage = { seq: Number(seq), capturedAtMs: Number(capturedAtMs), request: { answer, record } };
  if (age !== undefined) message.age = Number(age);
  return message;
}

/**
 * Fan-out between instances over sharded Redis pub/sub (SSUBSCRIBE, SPUBLISH: Redis 7), one
 * channel per endpoint in its partition's hash slot, so an instance receives only the endpoints
 * its sockets watch, and on a Cluster a message is copied only within the shard that owns the
 * endpoint. Redis delivers a channel's messages in publish order; the store publishes each
 * request from the script that numbers it, so they arrive in seq order. After a reconnect the
 * client has resubscribed (ioredis does it on its own); the channels are subscribed once more
 * to know it has taken effect, then `onReconnect` runs so the hub refills what was published
 * while the connection was down.
 */
/**
 * How long a local app's answer stays readable after it was published (`recentAnswer`): a
 * sender's instance subscribes within a command's round trip of its capture being stored, so a
 * few seconds cover it, and bound what answers cost Redis (RESPOND_MAX_BYTES per instance relaying).
 */
const RECENT_ANSWER_MS = 5_000;

export function createRedisBus(options: RedisBusOptions): Bus {
  const { publisher, subscriber } = options;
  const partitions = partitionPrefixes(options.prefix, options.partitions ?? 1);
  const channel = (endpointId: string) => `${partitions.of(endpointId)}ch:${endpointId}`;
  const endpointOf = (name: string) => name.slice(name.indexOf('}ch:') + 4);
  const answerKey = (endpointId: string, seq: number) => `${partitions.of(endpointId)}la:${endpointId}:${seq}`;
  let handler: BusHandler | undefined;
  let onReconnect: (() => void) | undefined;
  const subscribed = new Set<string>();

  subscriber.on('smessageBuffer', (name: Buffer, payload: Buffer) => {
    const message = decodeBusMessage(payload);
    if (!message) return;
    const channelName = name.toString('latin1');
    if (message.age !== undefined) options.onAge?.(channelName.slice(0, channelName.indexOf('}ch:') + 1), message.age);
    handler?.(endpointOf(channelName), message);
  });

  let readyBefore = subscriber.status === 'ready';
  const resubscribe = () => {
    const resubscribed =
      subscribed.size > 0
        ? Promise.all([...subscribed].map((endpointId) => subscriber.ssubscribe(channel(endpointId))))
        : Promise.resolve();
    resubscribed.then(
      () => onReconnect?.(),
      () => onReconnect?.(),
    );
  };
  subscriber.on('ready', () => {
    if (!readyBefore) {
      readyBefore = true;
      return;
    }
    resubscribe();
  });
  // A Cluster stays ready while it replaces a shard's subscriber (a node lost, slots moved):
  // what that shard published meanwhile is refilled the same way.
  subscriber.on('subscribersReady', () => {
    if (readyBefore) resubscribe();
  });

  return {
    onMessage(next) {
      handler = next;
    },

    async publish(endpointId, message) {
      if (message.answerFor === undefined) {
        await publisher.spublish(channel(endpointId), encodeBusMessage(message));
        return;
      }
      // Kept a moment too, in the channel's slot: its sender's instance may subscribe just after.
      const failed = (
        await publisher
          .multi()
          .set(answerKey(endpointId, message.answerFor), message.data ?? '', 'PX', RECENT_ANSWER_MS)
          .spublish(channel(endpointId), encodeBusMessage(message))
          .exec()
      )?.find(([error]) => error);
      if (failed) throw failed[0] as Error;
    },

    async recentAnswer(endpointId, seq) {
      return (await publisher.getBuffer(answerKey(endpointId, seq))) ?? undefined;
    },

    async subscribe(endpointId) {
      subscribed.add(endpointId);
      await subscriber.ssubscribe(channel(endpointId));
    },

    async unsubscribe(endpointId) {
      subscribed.delete(endpointId);
      await subscriber.sunsubscribe(channel(endpointId));
    },

    onReconnect(next) {
      onReconnect = next;
    },
  };
}
