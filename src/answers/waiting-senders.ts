import { relayedFrom, type RelayedAnswer } from '../endpoints/relayed-answer.js';
import type { Waits } from '../endpoints/waits.js';
import { deadline } from '../shared/deadline.js';

/**
 * Senders waiting for their local app's answer (`hookwatch forward --respond`), bounded in count
 * (RESPOND_MAX_WAITING, and RESPOND_MAX_WAITING_PER_ADDRESS for one client address) and in the
 * bytes of answers held until their sender has them (RESPOND_MAX_BYTES): past any of them, a
 * sender gets the configured answer at once. A wait ends when its sender hangs up.
 */
export interface WaitingSenders {
  /**
   * The local app's answer for request `seq`'s sender, or undefined: none within
   * RESPOND_TIMEOUT_MS, the responder let go, the answer could not be relayed, a bound is
   * reached, or one of `stops` aborted (the sender hung up, the app closes). A returned answer's bytes
   * stay counted until `release` is called.
   */
  wait(
    endpointId: string,
    seq: number,
    addressKey: string,
    stops: AbortSignal[],
  ): Promise<(RelayedAnswer & { bytes: Buffer; release: () => void }) | undefined>;
  /** Senders waiting now, and bytes held (for metrics and tests). */
  held(): { waiting: number; bytes: number };
}

/** The bounds above, from the settings of those names. */
export interface WaitingSenderBounds {
  timeoutMs: number;
  maxWaiting: number;
  maxWaitingPerAddress: number;
  maxBytes: number;
}

export function createWaitingSenders(waits: Waits, bounds: WaitingSenderBounds): WaitingSenders {
  let waiting = 0;
  let bytes = 0;
  const waitingByAddress = new Map<string, number>();

  return {
    async wait(endpointId, seq, addressKey, stops) {
      const stopped = () => stops.some((stop) => stop.aborted);
      const fromAddress = waitingByAddress.get(addressKey) ?? 0;
      if (stopped() || waiting >= bounds.maxWaiting || fromAddress >= bounds.maxWaitingPerAddress) return undefined;
      waiting++;
      waitingByAddress.set(addressKey, fromAddress + 1);
      const timeout = deadline(bounds.timeoutMs, ...stops);
      let data;
      try {
        data = await waits.forLocalAnswer(endpointId, seq, timeout.signal);
      } finally {
        timeout.clear();
        waiting--;
        const left = (waitingByAddress.get(addressKey) ?? 1) - 1;
        if (left > 0) waitingByAddress.set(addressKey, left);
        else waitingByAddress.delete(addressKey);
      }
      // Empty: the responder's answer could not be relayed (endpoint-service.ts, NO_LOCAL_ANSWER).
      if (stopped() || data === undefined || data.length === 0 || bytes + data.length > bounds.maxBytes)
        return undefined;
      const answer = relayedFrom(data);
      const cost = data.length + answer.bytes.length;
      bytes += cost;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        bytes -= cost;
      };
      return { ...answer, release };
    },

    held: () => ({ waiting, bytes }),
  };
}
