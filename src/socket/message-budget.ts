/**
 * What one socket may send: a message rate (a token bucket refilled by time, no timer) and the
 * bytes of messages waiting their turn. Counts only; the session decides what to do past them.
 */
export class MessageBudget {
  private tokens: number;
  private refilledAtMs: number;
  /** Bytes of messages parsed and waiting to be handled (see socket-session.ts). */
  waitingBytes = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    // Bursts of twice the rate: a page sends create and set-response together.
    this.tokens = 2 * perSecond;
    this.refilledAtMs = now();
  }

  /** Takes `cost` tokens; false (and nothing taken) when there are not enough. */
  take(cost: number): boolean {
    const at = this.now();
    this.tokens = Math.min(2 * this.perSecond, this.tokens + ((at - this.refilledAtMs) / 1000) * this.perSecond);
    this.refilledAtMs = at;
    if (this.tokens < cost) return false;
    this.tokens -= cost;
    return true;
  }
}
