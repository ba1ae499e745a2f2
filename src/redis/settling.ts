/** Captures whose senders were told 503 while their outcome was unknown, waiting to be settled; the oldest go past it. */
const MAX_UNSETTLED = 10_000;
/** How long an unsettled capture is tried, once a second: past it Redis is gone for long, and its backstop expiry took the key. */
const SETTLE_FOR_MS = 10 * 60_000;
const SETTLE_EVERY_MS = 1000;

interface SettlingDeps {
  /** Settles capture `captureNo` (SETTLE): the seq it was stored under, or 0 when it was not (it is refused from now on). */
  settle: (id: string, captureNo: number) => Promise<number>;
  /** Makes stored request `seq`'s record say its sender got 503, and announces it. */
  markFailed: (id: string, seq: number) => Promise<unknown>;
  now: () => number;
}

/**
 * Captures whose senders were told 503 with their outcome unknown (the connection failed, or
 * Redis answered too late): each is settled once Redis answers, one pass at a time. One that
 * did run has its record's answer made what its sender got; one that did not is refused if it
 * still comes. Bounded in count and in time.
 */
export function createSettling({ settle, markFailed, now }: SettlingDeps) {
  const unsettled = new Map<number, { id: string; untilMs: number }>();
  const pass = async () => {
    for (const [captureNo, { id, untilMs }] of unsettled) {
      if (now() > untilMs) {
        unsettled.delete(captureNo);
        continue;
      }
      try {
        const seq = await settle(id, captureNo);
        if (seq > 0) await markFailed(id, seq);
        unsettled.delete(captureNo);
      } catch {
        return;
      }
    }
  };
  let passing = false;
  const timer = setInterval(() => {
    if (unsettled.size === 0 || passing) return;
    passing = true;
    void pass().finally(() => (passing = false));
  }, SETTLE_EVERY_MS);
  timer.unref();
  return {
    unknownOutcome(id: string, captureNo: number) {
      unsettled.set(captureNo, { id, untilMs: now() + SETTLE_FOR_MS });
      for (const [oldest] of unsettled) {
        if (unsettled.size <= MAX_UNSETTLED) break;
        unsettled.delete(oldest);
      }
    },
  };
}
