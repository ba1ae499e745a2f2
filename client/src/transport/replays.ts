// The page's side of replays (docs/protocol.md, `replay`): it sends a tab's replay orders and
// hands the forwarder's `replay-started` and `replay-result` (or the server's refusal) to the
// panel that asked. Small and in the first bundle: the panel itself is loaded when first used.
import {
  MAX_WS_MESSAGE_BYTES,
  type ClientMessage,
  type EditedRequest,
  type ReplayMessage,
  type ReplayResultMessage,
  type ReplayStartedMessage,
  type ServerMessage,
} from '../../../src/shared/protocol.js';
import { encodeBase64, encodeUtf8 } from '../../../src/shared/signatures/bytes.js';
import { h } from '../dom.js';

export type ReplayEvent = ReplayStartedMessage | ReplayResultMessage | { type: 'refused'; message: string };

export class Replays {
  private readonly listeners = new Map<string, (event: ReplayEvent) => void>();
  /** The replay the server refuses next (`error` for `replay` carries no id: the server handles a socket's messages in order). */
  private readonly sentOrder: string[] = [];
  private nextId = 0;
  /** The newest replay result this tab got for each request, for the log's row mark. */
  private readonly results = new Map<number, ReplayResultMessage>();
  /** Called when a request's newest replay result changed (its row's mark is drawn again). */
  onResult: (seq: number) => void = () => undefined;

  constructor(
    private readonly send: (message: ClientMessage) => boolean,
    /** The page's share link, for the command that starts a forwarder. */
    readonly shareLink: () => string,
  ) {}

  /**
   * Sends an order; `listen` hears how it goes. 'offline' when the page has no live socket now,
   * 'too-large' when the edited copy does not fit in one socket message.
   */
  order(
    seq: number,
    edited: EditedRequest | undefined,
    listen: (event: ReplayEvent) => void,
  ): 'sent' | 'offline' | 'too-large' {
    const id = `r${++this.nextId}`;
    const fitted = edited === undefined ? undefined : fitFrame(edited);
    if (fitted === 'too-large') return fitted;
    const message: ReplayMessage =
      fitted === undefined ? { type: 'replay', id, seq } : { type: 'replay', id, seq, edited: fitted };
    if (!this.send(message)) return 'offline';
    this.listeners.set(id, listen);
    this.sentOrder.push(id);
    if (this.sentOrder.length > 32) this.sentOrder.shift();
    return 'sent';
  }

  /** A message from the server: true when it was a replay's. */
  handle(message: ServerMessage): boolean {
    if (message.type === 'replay-started' || message.type === 'replay-result') {
      this.listeners.get(message.id)?.(message);
      if (message.type === 'replay-result') {
        this.forget(message.id);
        this.results.set(message.seq, message);
        this.onResult(message.seq);
      }
      return true;
    }
    if (message.type === 'error' && message.for === 'replay') {
      const id = this.sentOrder.find((pending) => this.listeners.has(pending));
      if (id !== undefined) {
        this.listeners.get(id)?.({ type: 'refused', message: message.error.message });
        this.forget(id);
      }
      return true;
    }
    return false;
  }

  /** The newest replay result for request `seq` in this tab. */
  resultFor(seq: number): ReplayResultMessage | undefined {
    return this.results.get(seq);
  }

  /** Another endpoint: the marks go. */
  clearResults(): void {
    this.results.clear();
  }

  private forget(id: string): void {
    this.listeners.delete(id);
    const at = this.sentOrder.indexOf(id);
    if (at !== -1) this.sentOrder.splice(at, 1);
  }
}

/** Room in a frame for the message around the request: type, ids, the field names. */
const FRAME_SLACK_BYTES = 4096;

/**
 * The edited copy as it fits in one socket message (the server closes a socket sent a larger
 * one, 1009): text whose JSON escaping swells it past the limit goes as base64 instead (at most
 * 4/3), and what still does not fit is 'too-large'.
 */
function fitFrame(edited: EditedRequest): EditedRequest | 'too-large' {
  const limit = MAX_WS_MESSAGE_BYTES - FRAME_SLACK_BYTES;
  const size = (copy: EditedRequest) => encodeUtf8(JSON.stringify(copy)).length;
  if (size(edited) <= limit) return edited;
  if (edited.bodyEncoding === 'utf8') {
    const asBase64: EditedRequest = { ...edited, body: encodeBase64(encodeUtf8(edited.body)), bodyEncoding: 'base64' };
    if (size(asBase64) <= limit) return asBase64;
  }
  return 'too-large';
}

/**
 * The log row's mark of the newest replay ("↻ 200"), apart from the forwarding badge: a replay is
 * not a capture, and its result is not the forwarded one.
 */
export function replayBadge(result: ReplayResultMessage | undefined): HTMLElement | null {
  if (!result) return null;
  const outcome = result.status === undefined ? 'not sent' : String(result.status);
  const tone = result.status === undefined || result.status >= 500 ? 'bad' : result.status >= 400 ? 'warn' : 'ok';
  return h(
    'span',
    {
      class: `fwd-badge replay-badge fwd-${tone}`,
      title:
        result.status === undefined
          ? `replayed: ${result.error ?? 'not sent'}`
          : `replayed to ${result.target} → ${result.status}`,
    },
    h('span', { class: 'offscreen', text: 'replayed ' }),
    `↻ ${outcome}`,
  );
}

/** A row's badges side by side (null when it has none). */
export function rowBadges(...badges: Array<HTMLElement | null>): HTMLElement | null {
  const shown = badges.filter((badge): badge is HTMLElement => badge !== null);
  if (shown.length <= 1) return shown[0] ?? null;
  return h('span', { class: 'row-badges' }, ...shown);
}
