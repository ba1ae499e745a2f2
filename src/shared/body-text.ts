/**
 * A captured body as bytes and, when they are UTF-8, as text, for code that runs in the page and
 * the CLI alike (no Buffer). The receiver stores valid UTF-8 as base64 too when JSON escaping
 * would cost more (captured-request.ts), so a base64 body is decoded and checked.
 */
import type { CapturedRequest } from './schemas/captured-request.js';

export function bodyBytesOf(request: Pick<CapturedRequest, 'body' | 'bodyEncoding'>): Uint8Array {
  if (request.bodyEncoding === 'utf8') return new TextEncoder().encode(request.body);
  const binary = atob(request.body);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The body as text, or undefined when its bytes are not UTF-8. */
export function bodyTextOf(request: Pick<CapturedRequest, 'body' | 'bodyEncoding'>): string | undefined {
  if (request.bodyEncoding === 'utf8') return request.body;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bodyBytesOf(request));
  } catch {
    return undefined;
  }
}
