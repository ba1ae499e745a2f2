import type { EndpointService } from '../endpoints/endpoint-service.js';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import type { ReplayMessage, ReplayResultMessage, ReplayStartedMessage } from '../shared/protocol.js';
import type { Watcher } from './watcher.js';

/**
 * How long a replay waits for a forwarder to say it took it. A forwarder answers `replay-started`
 * as soon as the order arrives, so past this none is connected (or none is alive).
 */
export const REPLAY_ACK_MS = 2_000;
/** Replays one tab may have waiting for a forwarder at once. */
export const MAX_WAITING_REPLAYS = 8;

export const NO_FORWARDER_MESSAGE =
  "No hookwatch forward is connected to this endpoint, and the server sends no requests of its own. Start one on your machine: hookwatch forward '<share link>' --to http://localhost:3000/webhook";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * One tab's replays: it orders them from the endpoint's forwarders (`hookwatch forward`, which
 * send them from the developer's machine: the server sends nothing, decision 11), and passes
 * what they answer to this tab alone. A replay no forwarder takes within REPLAY_ACK_MS is
 * answered with a `replay-result` saying none is connected.
 */
export class ReplayRelay {
  /** Tab's replay id → the timer that gives up waiting for a forwarder to take it. */
  private readonly waiting = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly watcher: Watcher,
    private readonly endpointId: string,
    private readonly service: EndpointService,
    /** The endpoint's stored body cap: an edited body may not be larger than what is kept. */
    private readonly maxBodyBytes: number,
  ) {
    watcher.onDirect = (data) => this.arrived(data);
  }

  /** A tab's `replay`: a problem (for BAD_MESSAGE) when it cannot be ordered, else undefined once ordered or answered. */
  async order(message: ReplayMessage): Promise<string | undefined> {
    if (this.waiting.has(message.id)) return `replay ${message.id} is already waiting for a forwarder`;
    if (this.waiting.size >= MAX_WAITING_REPLAYS)
      return `at most ${MAX_WAITING_REPLAYS} replays may wait for a forwarder at once`;
    const stored = await this.service.readRequest(this.endpointId, message.seq);
    if (stored === undefined) {
      this.answer(
        message.id,
        message.seq,
        `Request #${message.seq} is no longer stored, so there is nothing to replay.`,
      );
      return undefined;
    }
    let request: CapturedRequest = stored;
    if (message.edited) {
      const { edited } = message;
      if (edited.bodyEncoding === 'base64' && (!BASE64.test(edited.body) || edited.body.length % 4 !== 0))
        return 'edited.body is not base64';
      const bytes =
        edited.bodyEncoding === 'base64' ? Buffer.from(edited.body, 'base64').length : Buffer.byteLength(edited.body);
      if (bytes > this.maxBodyBytes)
        return `the edited body is ${bytes} bytes, past this endpoint's ${this.maxBodyBytes}-byte body cap`;
      const queryAt = edited.path.indexOf('?');
      const path = queryAt === -1 ? edited.path : edited.path.slice(0, queryAt);
      request = {
        ...stored,
        method: edited.method,
        url: edited.path,
        subPath: path === '/' ? '' : path,
        headers: edited.headers,
        body: edited.body,
        bodyEncoding: edited.bodyEncoding,
      };
    }
    const timer = setTimeout(() => {
      this.waiting.delete(message.id);
      this.answer(message.id, message.seq, NO_FORWARDER_MESSAGE);
    }, REPLAY_ACK_MS);
    timer.unref();
    this.waiting.set(message.id, timer);
    await this.service.orderReplay(this.endpointId, {
      type: 'replay',
      id: `${this.watcher.id}.${message.id}`,
      seq: message.seq,
      request,
    });
    return undefined;
  }

  /** Stops waiting: the socket is closing. */
  close(): void {
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.watcher.onDirect = undefined;
  }

  /** A forwarder's word on one of this tab's replays: it was taken, so no "no forwarder" answer follows. */
  private arrived(data: Buffer | string): void {
    const text = data.toString();
    const { id } = JSON.parse(text) as { id: string };
    const timer = this.waiting.get(id);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
    this.watcher.send(text);
  }

  private answer(id: string, seq: number, error: string): void {
    const result: ReplayResultMessage = {
      type: 'replay-result',
      id,
      seq,
      target: '',
      error,
      durationMs: 0,
      headers: [],
      body: '',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    };
    this.watcher.send(JSON.stringify(result));
  }
}

/** A forwarder's `replay-started` or `replay-result` under its relay id (`<watcher id>.<tab's id>`): to that tab alone. */
export function relayReplayProgress(
  service: EndpointService,
  endpointId: string,
  message: ReplayStartedMessage | ReplayResultMessage,
): Promise<void> {
  const dot = message.id.indexOf('.');
  return service.relayReplayProgress(endpointId, message.id.slice(0, dot), {
    ...message,
    id: message.id.slice(dot + 1),
  });
}
