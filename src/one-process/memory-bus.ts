import type { Bus, BusHandler } from '../bus/bus.js';

/** In-process fan-out: publish calls the handler synchronously for a subscribed endpoint. */
export function createMemoryBus(): Bus {
  const subscribed = new Set<string>();
  let handler: BusHandler | undefined;

  return {
    onMessage(next) {
      handler = next;
    },

    async publish(endpointId, message) {
      if (subscribed.has(endpointId)) handler?.(endpointId, message);
    },

    async subscribe(endpointId) {
      subscribed.add(endpointId);
    },

    async unsubscribe(endpointId) {
      subscribed.delete(endpointId);
    },

    onReconnect() {
      // In process: never disconnected.
    },
  };
}
