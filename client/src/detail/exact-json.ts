// JSON parsed so that every number keeps the text it was sent as. JSON.parse turns
// 1234567890123456789 into 1234567890123456800, 19.90 into 19.9 and -0 into 0: a provider's 64-bit
// id would show wrong. Values are read a node at a time (the JSON tree builds only what is open),
// so a hostile body costs little more than JSON.parse. No DOM here: it is unit-tested.

/** One value of the document: a leaf, or a branch whose children are read one at a time. */
export type ExactValue =
  | { kind: 'string'; value: string }
  /** `text`: the number as the sender wrote it: `1e3`, `19.90`, `-0`, `1234567890123456789`. */
  | { kind: 'number'; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'array'; size: number; child(index: number): readonly [undefined, ExactValue] }
  /** An object's members in the order sent; a repeated key holds its last value, as with JSON.parse (the Raw tab shows them all). */
  | { kind: 'object'; size: number; child(index: number): readonly [string, ExactValue] };

// Strings (unrolled, so a long string is one linear pass) and numbers, as RFC 8259 writes them.
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
/**
 * Text that may hold a number JSON.parse would write differently: 16 or more digits, a trailing
 * zero after a point, an exponent, or minus zero. It may also match inside a string: then the
 * slower, exact way is taken for nothing, which is only slower.
 */
const RISKY_NUMBER = /\d[\d.]{15,}|\.\d*0(?!\d)|\d[eE]|-0(?![.\d])/;

/**
 * Parses `text` as JSON, or throws a SyntaxError as JSON.parse does. When no number in it could
 * change, JSON.parse alone reads it. Otherwise, before JSON.parse reads the text (it is fast, and
 * deep nesting does not overflow its stack), each string token gets a leading `s` and each number
 * becomes a string `n<its text>`, so that every leaf, and every key, says what it was.
 */
export function parseExact(text: string): ExactValue {
  if (!RISKY_NUMBER.test(text)) return wrap(JSON.parse(text) as unknown, false);
  const marked = text.replace(TOKENS, (token) => (token.charCodeAt(0) === 34 ? `"s${token.slice(1)}` : `"n${token}"`));
  return wrap(JSON.parse(marked) as unknown, true);
}

/** One parsed value as an ExactValue; `marked`: strings and numbers carry parseExact's marks. */
function wrap(raw: unknown, marked: boolean): ExactValue {
  if (typeof raw === 'string') {
    if (!marked) return { kind: 'string', value: raw };
    return raw.charCodeAt(0) === 110 ? { kind: 'number', text: raw.slice(1) } : { kind: 'string', value: raw.slice(1) };
  }
  // Only unmarked: a number JSON.parse writes back exactly as it was sent (RISKY_NUMBER saw none that would not be).
  if (typeof raw === 'number') return { kind: 'number', text: JSON.stringify(raw) };
  if (typeof raw === 'boolean') return { kind: 'boolean', value: raw };
  if (raw === null || typeof raw !== 'object') return { kind: 'null' };
  if (Array.isArray(raw))
    return { kind: 'array', size: raw.length, child: (index) => [undefined, wrap(raw[index], marked)] };
  const keys = Object.keys(raw);
  return {
    kind: 'object',
    size: keys.length,
    child: (index) => {
      const key = keys[index] as string;
      return [marked ? key.slice(1) : key, wrap((raw as Record<string, unknown>)[key], marked)];
    },
  };
}
