import type { SignedRequest } from './types.js';

export interface HeaderValue {
  /** The name as the request spelled it, for messages the user can match to what they see. */
  name: string;
  value: string;
}

/** Every value of a header, in arrival order; names match case-insensitively, values are trimmed. */
export function findHeaderValues(headers: SignedRequest['headers'], name: string): HeaderValue[] {
  const wanted = name.toLowerCase();
  return headers
    .filter(([key]) => key.toLowerCase() === wanted)
    .map(([key, value]) => ({ name: key, value: value.trim() }));
}

export function hasHeader(headers: SignedRequest['headers'], name: string): boolean {
  const wanted = name.toLowerCase();
  return headers.some(([key]) => key.toLowerCase() === wanted);
}
