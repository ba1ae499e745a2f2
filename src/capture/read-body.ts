import type { Readable } from 'node:stream';

export interface BodyLimits {
  /** Bytes kept; the rest is counted, not kept. */
  maxBodyBytes: number;
  /** Bytes read at most; past it reading stops. */
  readLimitBytes: number;
}

export interface ReadBody {
  /** The first `maxBodyBytes` bytes. */
  kept: Buffer;
  /** Bytes read (all of the body unless `overLimit`). */
  size: number;
  truncated: boolean;
  /** The body went past the read limit; reading stopped there and the rest was never read. */
  overLimit: boolean;
}

/**
 * Reads a request body as it streams in, keeping at most `maxBodyBytes` and stopping at
 * `readLimitBytes`, so memory per request is bounded by the cap whatever the sender declares
 * (Content-Length is not trusted). Rejects when the sender aborts mid-body.
 */
export function readBody(stream: Readable, limits: BodyLimits): Promise<ReadBody> {
  if (stream.readableEnded) return Promise.resolve({ kept: Buffer.alloc(0), size: 0, truncated: false, overLimit: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let size = 0;

    const finish = (result: ReadBody | Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (kept < limits.maxBodyBytes) {
        const take = Math.min(chunk.length, limits.maxBodyBytes - kept);
        chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
        kept += take;
      }
      if (size > limits.readLimitBytes) {
        // Pause rather than destroy: the socket must stay open for the 413 answer, which then
        // closes the connection so the unread rest is never buffered.
        stream.pause();
        finish({ kept: concat(chunks, kept), size, truncated: true, overLimit: true });
      }
    };
    const onEnd = () => finish({ kept: concat(chunks, kept), size, truncated: size > kept, overLimit: false });
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new Error('request aborted before its body ended'));

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
