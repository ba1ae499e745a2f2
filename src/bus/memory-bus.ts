import type { Bus, BusListener } from './bus.js';

/** In-process fan-out: publish calls every listener synchronously, in subscription order. */
export function createMemoryBus(): Bus {
  const listeners = new Map<string, Set<BusListener>>();

  return {
    async publish(endpointId, message) {
      const set = listeners.get(endpointId);
      if (!set) return;
      for (const listener of set) listener(message);
    },

    async subscribe(endpointId, listener) {
      let set = listeners.get(endpointId);
      if (!set) {
        set = new Set();
        listeners.set(endpointId, set);
      }
      set.add(listener);
      return async () => {
        const current = listeners.get(endpointId);
        if (!current) return;
        current.delete(listener);
        if (current.size === 0) listeners.delete(endpointId);
      };
    },
  };
}
