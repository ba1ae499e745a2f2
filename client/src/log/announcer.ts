// News of arrivals: for screen readers, and in the tab's title while the tab is hidden.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { byId } from '../dom.js';
import { shortPath } from '../format.js';

/** At most one announcement in this long: a burst is announced once. */
const ANNOUNCE_MS = 1500;

export class Announcer {
  private readonly region = byId('announcer');
  private pending: CapturedRequest[] = [];
  private timer: number | undefined;
  /** Arrivals while the tab is hidden (the title count). */
  private unread = 0;

  constructor() {
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) return;
      this.unread = 0;
      this.showUnread();
    });
  }

  /** A request arrived live. */
  arrived(request: CapturedRequest): void {
    this.announce(request);
    if (!document.hidden) return;
    this.unread++;
    this.showUnread();
  }

  /** Tells screen readers about new requests: "New request: POST /hook", or "3 new requests". */
  private announce(request: CapturedRequest): void {
    this.pending.push(request);
    this.timer ??= window.setTimeout(() => {
      const [first] = this.pending;
      this.region.textContent =
        this.pending.length === 1 && first
          ? `New request: ${first.method} ${shortPath(first)}`
          : `${this.pending.length} new requests`;
      this.pending = [];
      this.timer = undefined;
    }, ANNOUNCE_MS);
  }

  private showUnread(): void {
    document.title = this.unread > 0 ? `(${this.unread}) Hookwatch` : 'Hookwatch';
  }
}
