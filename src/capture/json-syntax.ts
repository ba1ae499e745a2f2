/**
 * Whether a body is JSON (RFC 8259, as JSON.parse reads it) nested at most `maxDepth` deep: the
 * capture's `isJson` (`isJsonBody`). This pass reads the bytes once: no string is decoded and no
 * value is built, so judging a megabyte of JSON costs no heap. The bytes must already be valid UTF-8.
 */
export function isJsonBytes(bytes: Uint8Array, maxDepth: number): boolean {
  const end = bytes.length;
  /** Open containers, innermost last: true for an object. */
  const open: boolean[] = [];
  let at = skipSpace(bytes, 0);
  for (;;) {
    // A value starts at `at`.
    const first = bytes[at];
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      if (open.length >= maxDepth) return false;
      const object = first === OPEN_OBJECT;
      at = skipSpace(bytes, at + 1);
      if (bytes[at] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        at++;
      } else {
        open.push(object);
        if (object) {
          at = memberName(bytes, at);
          if (at === -1) return false;
        }
        continue;
      }
    } else if (first === QUOTE) {
      at = stringEnd(bytes, at);
    } else if (first === MINUS || (first !== undefined && first >= DIGIT_0 && first <= DIGIT_9)) {
      at = numberEnd(bytes, at);
    } else if (first === 0x74 /* t */) {
      at = literalEnd(bytes, at, TRUE);
    } else if (first === 0x66 /* f */) {
      at = literalEnd(bytes, at, FALSE);
    } else if (first === 0x6e /* n */) {
      at = literalEnd(bytes, at, NULL);
    } else {
      return false;
    }
    if (at === -1) return false;
    // After a value: close containers, or go on to the next element or member.
    for (;;) {
      at = skipSpace(bytes, at);
      if (open.length === 0) return at === end;
      const object = open[open.length - 1] as boolean;
      const next = bytes[at];
      if (next === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        open.pop();
        at++;
        continue;
      }
      if (next !== COMMA) return false;
      at = skipSpace(bytes, at + 1);
      if (object) {
        at = memberName(bytes, at);
        if (at === -1) return false;
      }
      break;
    }
  }
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function skipSpace(bytes: Uint8Array, at: number): number {
  for (;;) {
    const byte = bytes[at];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return at;
    at++;
  }
}

/** After `"name"` and `:` at `at` (spaces allowed around the colon): where the member's value starts, or -1. */
function memberName(bytes: Uint8Array, at: number): number {
  if (bytes[at] !== QUOTE) return -1;
  const after = stringEnd(bytes, at);
  if (after === -1) return -1;
  const colon = skipSpace(bytes, after);
  return bytes[colon] === COLON ? skipSpace(bytes, colon + 1) : -1;
}

/** Past the string whose opening quote is at `at`, or -1: no raw control byte, only JSON's escapes. */
function stringEnd(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === QUOTE) return i + 1;
    if (byte < 0x20) return -1;
    if (byte !== BACKSLASH) continue;
    const escaped = bytes[++i];
    if (escaped === 0x75 /* u */) {
      for (let hex = 0; hex < 4; hex++) if (!isHex(bytes[++i])) return -1;
    } else if (
      escaped !== QUOTE &&
      escaped !== BACKSLASH &&
      escaped !== 0x2f /* / */ &&
      escaped !== 0x62 /* b */ &&
      escaped !== 0x66 /* f */ &&
      escaped !== 0x6e /* n */ &&
      escaped !== 0x72 /* r */ &&
      escaped !== 0x74 /* t */
    ) {
      return -1;
    }
  }
  return -1;
}

const isHex = (byte: number | undefined): boolean =>
  byte !== undefined &&
  ((byte >= DIGIT_0 && byte <= DIGIT_9) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46));

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= DIGIT_0 && byte <= DIGIT_9;

/** Past `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `at`, or -1. */
function numberEnd(bytes: Uint8Array, at: number): number {
  if (bytes[at] === MINUS) at++;
  if (bytes[at] === DIGIT_0) at++;
  else if (isDigit(bytes[at])) while (isDigit(bytes[at])) at++;
  else return -1;
  if (bytes[at] === 0x2e /* . */) {
    at++;
    if (!isDigit(bytes[at])) return -1;
    while (isDigit(bytes[at])) at++;
  }
  if (bytes[at] === 0x65 /* e */ || bytes[at] === 0x45 /* E */) {
    at++;
    if (bytes[at] === 0x2b /* + */ || bytes[at] === MINUS) at++;
    if (!isDigit(bytes[at])) return -1;
    while (isDigit(bytes[at])) at++;
  }
  return at;
}

function literalEnd(bytes: Uint8Array, at: number, literal: readonly number[]): number {
  for (let i = 0; i < literal.length; i++) if (bytes[at + i] !== literal[i]) return -1;
  return at + literal.length;
}

/**
 * Bodies up to this size are judged by JSON.parse, which is faster on them than a pass in
 * JavaScript; larger ones by isJsonBytes, which builds nothing (a megabyte parsed would leave its
 * objects and its text in the heap until the next full collection).
 */
const PARSE_BELOW_BYTES = 64 * 1024;

/**
 * Whether a body (valid UTF-8) is JSON nested at most `maxDepth` deep: the capture's `isJson`.
 */
export function isJsonBody(body: Buffer, maxDepth: number): boolean {
  if (body.length >= PARSE_BELOW_BYTES) return isJsonBytes(body, maxDepth);
  // Cheap first-character gate so plain text and form bodies skip JSON.parse entirely.
  const first = body[skipSpace(body, 0)];
  const plausible =
    first === OPEN_OBJECT ||
    first === OPEN_ARRAY ||
    first === QUOTE ||
    first === MINUS ||
    isDigit(first) ||
    first === 0x74 /* t */ ||
    first === 0x66 /* f */ ||
    first === 0x6e; /* n */
  if (!plausible) return false;
  const text = body.toString('utf8');
  if (nestingDepth(text) > maxDepth) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Deepest bracket nesting outside strings; one pass, no allocation. Only meaningful for JSON.
 * String contents are skipped with indexOf (native), so a body that is mostly strings costs
 * little, which is most webhook bodies.
 */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) break; // unterminated string: nothing after it counts
      i = end;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return deepest;
}

/** True when an odd run of backslashes precedes `at`. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let j = at - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++;
  return backslashes % 2 === 1;
}
