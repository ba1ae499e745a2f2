/** One event for every watcher of an endpoint, already serialised as a protocol message. */
export interface BusMessage {
  /** Sequence number of the captured request it carries; absent for other events. */
  seq?: number;
  /** The protocol message, sent as-is to each watcher. */
  data: string;
  /** Capture time (ms since epoch) of the request it carries, for the delivery-lag metric. */
  capturedAtMs?: number;
}

export type BusListener = (message: BusMessage) => void;

/**
 * Fan-out of endpoint events between instances. Delivery is at most once per subscriber and in
 * publish order per endpoint; a subscriber that joins late sees only later messages (the Store
 * holds the backlog).
 */
export interface Bus {
  publish(endpointId: string, message: BusMessage): Promise<void>;
  /** Starts delivering the endpoint's messages to `listener`; resolves once subscribed. */
  subscribe(endpointId: string, listener: BusListener): Promise<Unsubscribe>;
}

export type Unsubscribe = () => Promise<void>;
