import type { Config } from '../config.js';
import { relayedFrom, type RelayedAnswer } from '../endpoints/local-answer.js';
import type { Hub } from '../live/hub.js';

/**
 * Senders waiting for their local app's answer (`hookwatch forward --respond`), bounded in count
 * (RESPOND_MAX_WAITING) and in the bytes of answers held until their sender has them
 * (RESPOND_MAX_BYTES): past either, a sender gets the configured answer at once.
 */
export interface LocalAnswers {
  /**
   * The local app's answer for request `seq`'s sender, or undefined: none within
   * RESPOND_TIMEOUT_MS, the responder let go, the answer could not be relayed, or a bound is
   * reached. A returned answer's bytes stay counted until `release` is called.
   */
  wait(endpointId: string, seq: number, closing: AbortSignal): Promise<(RelayedAnswer & { bytes: Buffer; release: () => void }) | undefined>;
  /** Senders waiting now, and bytes held (for metrics and tests). */
  held(): { waiting: number; bytes: number };
}

export function createLocalAnswers(options: { hub: Hub; config: Config }): LocalAnswers {
  const { hub, config } = options;
  let waiting = 0;
  let bytes = 0;

  return {
    async wait(endpointId, seq, closing) {
      if (waiting >= config.respondMaxWaiting) return undefined;
      waiting++;
      let data;
      try {
        data = await hub.waitForLocalAnswer(endpointId, seq, AbortSignal.any([closing, AbortSignal.timeout(config.respondTimeoutMs)]));
      } finally {
        waiting--;
      }
      // Empty: the responder's answer could not be relayed (endpoint-service.ts, NO_LOCAL_ANSWER).
      if (data === undefined || data.length === 0 || bytes + data.length > config.respondMaxBytes) return undefined;
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
