import type { ServerResponse } from 'node:http';

/**
 * Bytes of HTTP API replies written but not yet taken by their readers. A reply is handed to
 * the socket whole; a client that asks and never reads leaves it in this process's memory until
 * the connection ends. Counting those bytes, in all and per client address, bounds what such
 * clients can hold, as MAX_SOCKET_BUFFER_BYTES bounds a watcher that stops reading.
 */
export interface UnsentReplies {
  /**
   * Counts `bytes` for `addressKey` until `response` is flushed or its connection ends. Returns
   * 'ok', or which cap it would pass (nothing counted then).
   */
  hold(response: ServerResponse, addressKey: string, bytes: number): 'ok' | 'address' | 'total';
  /** Bytes held now, in all. */
  held(): number;
}

export function createUnsentReplies(limits: { maxBytes: number; maxBytesPerAddress: number }): UnsentReplies {
  let total = 0;
  const byAddress = new Map<string, number>();
  return {
    hold(response, addressKey, bytes) {
      const ofAddress = byAddress.get(addressKey) ?? 0;
      if (ofAddress + bytes > limits.maxBytesPerAddress) return 'address';
      if (total + bytes > limits.maxBytes) return 'total';
      total += bytes;
      byAddress.set(addressKey, ofAddress + bytes);
      let given = false;
      // 'finish': the last byte left this process for the kernel; 'close': the connection ended
      // first. Whichever comes first gives the bytes back, once.
      const give = () => {
        if (given) return;
        given = true;
        total -= bytes;
        const left = (byAddress.get(addressKey) ?? bytes) - bytes;
        if (left <= 0) byAddress.delete(addressKey);
        else byAddress.set(addressKey, left);
      };
      response.once('finish', give);
      response.once('close', give);
      return 'ok';
    },
    held: () => total,
  };
}
