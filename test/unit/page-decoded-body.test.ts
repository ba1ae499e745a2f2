import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { canDecode, decodeBody, MAX_DECODED_BYTES } from '../../client/src/detail/decoded-body.js';

const text = Buffer.from(JSON.stringify({ id: 1234567890123456789n.toString(), event: 'order.paid' }).repeat(50));

describe('the page: compressed bodies decoded, bounded', () => {
  it('decodes gzip, zlib deflate and raw deflate', async () => {
    for (const [coding, bytes] of [
      ['gzip', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['deflate', deflateRawSync(text)],
    ] as const) {
      const decoded = await decodeBody(new Uint8Array(bytes), coding);
      expect([coding, Buffer.from(decoded.bytes).equals(text), decoded.cut, decoded.problem]).toEqual([
        coding,
        true,
        false,
        undefined,
      ]);
    }
  });

  it('cuts a zip bomb at the cap, and says so', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const decoded = await decodeBody(new Uint8Array(bomb), 'gzip');
    expect(decoded.bytes.length).toBe(MAX_DECODED_BYTES);
    expect(decoded.cut).toBe(true);
    // Exactly at the cap is not cut.
    const exact = await decodeBody(new Uint8Array(gzipSync(Buffer.alloc(1000))), 'gzip', 1000);
    expect([exact.bytes.length, exact.cut]).toEqual([1000, false]);
  });

  it('gives what decoded before a cut-short or broken body, with why', async () => {
    const whole = gzipSync(text);
    const short = await decodeBody(new Uint8Array(whole.subarray(0, whole.length - 20)), 'gzip');
    expect(short.problem).toBeTruthy();
    expect(text.subarray(0, short.bytes.length).equals(Buffer.from(short.bytes))).toBe(true);
    const garbage = await decodeBody(new Uint8Array([1, 2, 3, 4, 5]), 'gzip');
    expect(garbage.problem).toBeTruthy();
    expect(garbage.bytes.length).toBe(0);
  });

  it('says which codings it cannot decode', async () => {
    expect(canDecode('compress')).toBe(false);
    await expect(decodeBody(new Uint8Array(brotliCompressSync(text)), 'zstd')).rejects.toThrow('cannot decode zstd');
    // Brotli as far as this runtime's DecompressionStream takes it.
    if (canDecode('br'))
      expect(Buffer.from((await decodeBody(new Uint8Array(brotliCompressSync(text)), 'br')).bytes).equals(text)).toBe(
        true,
      );
  });
});
