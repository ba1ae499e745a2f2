import type { RecordBytes } from '../store/stored-request.js';

/**
 * One event for every watcher of an endpoint: a protocol message, serialised once. The hub
 * frames it once and writes the same bytes to each of its local watchers.
 */
export interface BusMessage {
  /** Sequence number of the captured request it carries; absent for other events. */
  seq?: number;
  /** A captured request (with `seq`): its answer and record as stored, sent without copying (socket/frame.ts). */
  request?: { answer: string; record: RecordBytes };
  /** Any other event: the protocol message (JSON), sent as is to each watcher. */
  data?: Buffer | string;
  /** Capture time (ms since epoch) of the request it carries, for the delivery-lag metric. */
  capturedAtMs?: number;
  /** Redis only: the request's age in its partition (redis/scripts.ts), which tells the store when Redis has lost writes. */
  age?: number;
  /** The endpoint is gone: after this message its watchers are closed (4004). */
  ends?: boolean;
  /**
   * A local app's answer (`local-answer`) for the sender of request `answerFor`, who waits on
   * some instance (endpoints/waits.ts, `forLocalAnswer`); never passed to watchers.
   */
  answerFor?: number;
  /** Only for the watchers that announced themselves forwarders (`announce-forwarder`): a page's replay order. */
  toForwarders?: boolean;
  /** Only for the watcher with this id: a replay's progress, for the tab that asked for it. */
  toWatcher?: string;
}

export type BusHandler = (endpointId: string, message: BusMessage) => void;

/**
 * Fan-out of endpoint events between instances. Each instance subscribes to the endpoints its
 * sockets watch and gets their messages through one handler (as a Redis connection does), so an
 * endpoint costs the bus a set entry, not a listener of its own. Delivery is at most once per
 * instance and in publish order per endpoint; a subscription sees only later messages (the
 * Store holds the backlog). Subscribe and unsubscribe take effect in call order.
 */
export interface Bus {
  /** Sets the handler for messages of every subscribed endpoint (one per bus). */
  onMessage(handler: BusHandler): void;
  publish(endpointId: string, message: BusMessage): Promise<void>;
  /** Resolves once the endpoint's messages reach the handler. */
  subscribe(endpointId: string): Promise<void>;
  unsubscribe(endpointId: string): Promise<void>;
  /**
   * Sets what runs after the bus lost its connection and has it back, subscriptions restored:
   * messages published meanwhile were lost to this instance (the Store still has the requests).
   * The memory bus never loses its connection.
   */
  onReconnect(handler: () => void): void;
  /**
   * A local app's answer published (`answerFor`) for request `seq`'s sender in the last
   * moments, for a sender's instance that subscribed after it went by. Only a bus that may
   * deliver a subscription late (Redis: the sender's instance subscribes once the store says a
   * responder holds the endpoint) keeps them; undefined otherwise.
   */
  recentAnswer?(endpointId: string, seq: number): Promise<Buffer | undefined>;
}
