import type { Bus } from '../bus/bus.js';

/** What an endpoint's events tell one listener (each optional), on whichever instance they happened. */
export interface EndpointListener {
  /** A request was captured. */
  request?(): void;
  /** The request whose sender this listener is: it hears that request's local answer (`answer`), and no other. */
  answerFor?: number;
  /** A responder sent its local app's answer for request `answerFor`'s sender. */
  answer?(data: Buffer | string): void;
  /** The responder let go: nobody answers for the local app now. */
  noResponder?(): void;
  /** The endpoint ended (deleted, expired). */
  gone?(): void;
}

/**
 * An instance's subscriptions to endpoints' events (the hub, socket/hub.ts): the first listener
 * of an endpoint subscribes and leases it, as a watching socket does, and the last one to stop
 * lets it go.
 */
export interface EndpointEvents {
  /** Starts `listener` on the endpoint's events; `ready` says once they flow (or why not). Call `stop` when done. */
  listen(endpointId: string, listener: EndpointListener): { ready: Promise<'ready' | 'gone' | 'failed'>; stop(): void };
}

/** How a wait for a request ended. */
export type WaitOutcome = 'request' | 'gone' | 'aborted' | 'failed';

export interface Waits {
  /**
   * Resolves once a request is captured on the endpoint, on any instance ('request'), the
   * endpoint ends ('gone'), `signal` aborts ('aborted'), or the events cannot be had ('failed').
   * While it waits, the endpoint is held as by a watcher. `stored` is asked once the events
   * flow: a request stored before then would never be announced to this wait.
   */
  forRequest(endpointId: string, signal: AbortSignal, stored: () => Promise<boolean>): Promise<WaitOutcome>;
  /**
   * Resolves with the `local-answer` message a responder sent for request `seq`'s sender, on any
   * instance, or undefined when `signal` aborts (the timeout), the responder lets go, or the
   * endpoint ends. One answered before this instance listened is kept a moment by the bus.
   */
  forLocalAnswer(endpointId: string, seq: number, signal: AbortSignal): Promise<Buffer | string | undefined>;
}

/**
 * The waits of HTTP clients on an endpoint's events: long polls for the next request, and
 * senders for their local app's answer. Each listens for as long as it waits, and no longer.
 */
export function createWaits(events: EndpointEvents, bus: Pick<Bus, 'recentAnswer'>): Waits {
  /** Listens until `settle` is called or `signal` aborts (settled with `onAbort`), then stops. */
  const waitOn = async <T>(
    endpointId: string,
    signal: AbortSignal,
    onAbort: T,
    listener: (settle: (value: T) => void) => EndpointListener,
    whenReady: (settle: (value: T) => void) => Promise<unknown>,
    failed: (why: 'gone' | 'failed') => T,
  ): Promise<T> => {
    let settle: (value: T) => void = () => undefined;
    const settled = new Promise<T>((resolve) => (settle = resolve));
    const listening = events.listen(endpointId, listener(settle));
    const aborted = () => settle(onAbort);
    signal.addEventListener('abort', aborted, { once: true });
    try {
      const ready = await listening.ready;
      if (ready !== 'ready') return failed(ready);
      await whenReady(settle);
      return await settled;
    } finally {
      signal.removeEventListener('abort', aborted);
      listening.stop();
    }
  };
  return {
    async forRequest(endpointId, signal, stored) {
      if (signal.aborted) return 'aborted';
      return waitOn<WaitOutcome>(
        endpointId,
        signal,
        'aborted',
        (settle) => ({ request: () => settle('request'), gone: () => settle('gone') }),
        async (settle) => {
          if (await stored()) settle('request');
        },
        (why) => why,
      );
    },
    async forLocalAnswer(endpointId, seq, signal) {
      if (signal.aborted) return undefined;
      return waitOn<Buffer | string | undefined>(
        endpointId,
        signal,
        undefined,
        (settle) => ({
          answerFor: seq,
          answer: (data) => settle(data),
          noResponder: () => settle(undefined),
          gone: () => settle(undefined),
        }),
        async (settle) => {
          // Answered before this instance listened (the responder can be that quick): kept for a moment by the bus.
          const recent = await bus.recentAnswer?.(endpointId, seq).catch(() => undefined);
          if (recent !== undefined) settle(recent);
        },
        // A bus that cannot subscribe (or an endpoint gone) leaves the configured answer.
        () => undefined,
      );
    },
  };
}
