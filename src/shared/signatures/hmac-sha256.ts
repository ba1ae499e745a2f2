/** Bytes in an HMAC-SHA256 digest: a carried signature of any other length cannot be one. */
export const HMAC_SHA256_BYTES = 32;

/** Web Crypto rather than node:crypto, so the same code runs in the page and in the CLI. */
export async function computeHmacSha256(key: Uint8Array, content: Uint8Array): Promise<Uint8Array> {
  const subtle = globalThis.crypto.subtle;
  // Copies pin the buffers to plain ArrayBuffers, which is what BufferSource accepts.
  const cryptoKey = await subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await subtle.sign('HMAC', cryptoKey, new Uint8Array(content)));
}

/**
 * Compares without stopping at the first difference, so the time taken says nothing about how much
 * of a guessed signature was right. Lengths are public (always 32 here), so they may short-circuit.
 */
export function compareInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}
