// Byte encodings done by hand rather than with Buffer: this module is bundled for the browser too.

const encoder = new TextEncoder();

const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})*$/;
// Standard alphabet only: every provider here writes standard base64, so a `-` or `_` is a sign of a
// wrong value, not a variant to accept. Padding may be left off (Svix secrets have none).
const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;

export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export function concatBytes(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first, 0);
  joined.set(second, first.length);
  return joined;
}

export function encodeHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Undefined when the text is not an even-length run of hex digits. */
export function decodeHex(text: string): Uint8Array | undefined {
  if (!HEX_PATTERN.test(text)) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function encodeBase64(bytes: Uint8Array): string {
  // btoa takes one Latin-1 character per byte; built 32 KiB at a time, not one byte at a time,
  // so a megabyte body is not a million string joins (and stays under the argument limit).
  const CHUNK = 0x8000;
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

/** Undefined when the text is not standard base64 (atob alone would also accept whitespace inside). */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!BASE64_PATTERN.test(text)) return undefined;
  const unpadded = text.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  if (text.length !== unpadded.length && text.length % 4 !== 0) return undefined;
  let binary: string;
  try {
    binary = atob(unpadded);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
