import type { Readable } from 'node:stream';

export interface BodyLimits {
  /** Bytes kept; the rest is counted, not kept. */
  maxBodyBytes: number;
  /** Bytes read at most; past it reading stops. */
  readLimitBytes: number;
}

/** The process-wide count of body bytes held by requests still being read. */
export interface ReadingBudget {
  /** Counts `bytes` more; false (and nothing counted) when that would pass the cap. */
  take(bytes: number): boolean;
  give(bytes: number): void;
  held(): number;
}

export function createReadingBudget(maxBytes: number): ReadingBudget {
  let held = 0;
  return {
    take(bytes) {
      if (held + bytes > maxBytes) return false;
      held += bytes;
      return true;
    },
    give(bytes) {
      held -= bytes;
    },
    held: () => held,
  };
}

export interface ReadBody {
  /** The first `maxBodyBytes` bytes. Counted in the reading budget until the caller gives them back. */
  bytes: Buffer;
  /** Bytes read (all of the body unless `overLimit` or `atCapacity`). */
  size: number;
  truncated: boolean;
  /** The body went past the read limit; reading stopped there and the rest was never read. */
  overLimit: boolean;
  /** The reading budget was full; reading stopped and nothing is kept. */
  atCapacity: boolean;
}

/** The sender went away before its body ended: there is nothing whole to keep and no one to answer. */
export class SenderGoneError extends Error {
  constructor() {
    super('request aborted before its body ended');
  }
}

const EMPTY: ReadBody = Object.freeze({
  bytes: Buffer.alloc(0),
  size: 0,
  truncated: false,
  overLimit: false,
  atCapacity: false,
});

/**
 * Reads a request body as it streams in, keeping at most `maxBodyBytes` and stopping at
 * `readLimitBytes`, so memory per request is bounded by the cap whatever the sender declares
 * (Content-Length is not trusted). The kept bytes count against `budget` as they arrive; when it
 * is full, reading stops with `atCapacity`. Rejects when the sender aborts mid-body (having
 * given back what it took).
 */
export function readBody(stream: Readable, limits: BodyLimits, budget: ReadingBudget): Promise<ReadBody> {
  if (stream.readableEnded) return Promise.resolve(EMPTY);
  // Gone while the route was still deciding (a store lookup): no event is coming.
  if (stream.destroyed) return Promise.reject(new SenderGoneError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let size = 0;

    const finish = (result: ReadBody | Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (result instanceof Error || result.atCapacity) budget.give(kept);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    // Pause rather than destroy when stopping early: the socket must stay open for the answer,
    // which then closes the connection so the unread rest is never buffered.
    const stop = (result: ReadBody) => {
      stream.pause();
      finish(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (kept < limits.maxBodyBytes) {
        const take = Math.min(chunk.length, limits.maxBodyBytes - kept);
        if (!budget.take(take)) return stop({ ...EMPTY, size, atCapacity: true });
        chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
        kept += take;
      }
      if (size > limits.readLimitBytes)
        stop({ bytes: concat(chunks, kept), size, truncated: true, overLimit: true, atCapacity: false });
    };
    const onEnd = () =>
      finish({ bytes: concat(chunks, kept), size, truncated: size > kept, overLimit: false, atCapacity: false });
    const onError = () => finish(new SenderGoneError());
    const onClose = () => finish(new SenderGoneError());

    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

function concat(chunks: Buffer[], length: number): Buffer {
  if (chunks.length === 1) return chunks[0] as Buffer;
  if (chunks.length === 0) return Buffer.alloc(0);
  return Buffer.concat(chunks, length);
}
