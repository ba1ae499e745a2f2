// JSON parsed so that every number keeps the text it was sent as. JSON.parse turns
// 1234567890123456789 into 1234567890123456800, 19.90 into 19.9 and -0 into 0: a provider's 64-bit
// id would show wrong. No DOM here: it is unit-tested.

/** A number as the sender wrote it: `1e3`, `19.90`, `-0`, `1234567890123456789`. */
export interface ExactNumber {
  readonly number: string;
}

/** An object's members in the order sent; a repeated key holds its last value, as with JSON.parse (the Raw tab shows them all). */
export interface ExactObject {
  readonly members: ReadonlyArray<readonly [string, ExactJson]>;
}

export type ExactJson = string | boolean | null | ExactNumber | ExactJson[] | ExactObject;

// Strings (unrolled, so a long string is one linear pass) and numbers, as RFC 8259 writes them.
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * Parses `text` as JSON, or throws a SyntaxError as JSON.parse does. The structure is left to
 * JSON.parse (fast, and it does not overflow the stack on deep nesting): before it reads the text,
 * each string token gets a leading `s` and each number becomes a string `n<its text>`, so that
 * every leaf, and every key, comes out as a string that says what it was.
 */
export function parseExact(text: string): ExactJson {
  const marked = text.replace(TOKENS, (token) => (token.charCodeAt(0) === 34 ? `"s${token.slice(1)}` : `"n${token}"`));
  return unmark(JSON.parse(marked) as unknown);
}

/** The marked value back as an ExactJson; iterative, so depth costs no stack. */
function unmark(root: unknown): ExactJson {
  const leaf = (value: unknown): ExactJson | undefined => {
    if (typeof value === 'string') return value.charCodeAt(0) === 110 ? { number: value.slice(1) } : value.slice(1);
    if (value === null || typeof value === 'boolean') return value;
    return undefined;
  };
  const top = leaf(root);
  if (top !== undefined) return top;
  const made = Array.isArray(root) ? [] : { members: [] };
  const work: Array<[unknown, ExactJson[] | Array<readonly [string, ExactJson]>]> = [[root, Array.isArray(made) ? made : (made.members as Array<readonly [string, ExactJson]>)]];
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    const [source, target] = item;
    const entries: Array<[string | undefined, unknown]> = Array.isArray(source) ? source.map((value) => [undefined, value]) : Object.entries(source as object);
    for (const [key, value] of entries) {
      let child: ExactJson | undefined = leaf(value);
      if (child === undefined) {
        const children: ExactJson[] | Array<readonly [string, ExactJson]> = [];
        child = Array.isArray(value) ? (children as ExactJson[]) : { members: children as Array<readonly [string, ExactJson]> };
        work.push([value, children]);
      }
      if (key === undefined) (target as ExactJson[]).push(child);
      else (target as Array<readonly [string, ExactJson]>).push([key.slice(1), child]);
    }
  }
  return made;
}

export function isExactNumber(value: ExactJson): value is ExactNumber {
  return value !== null && typeof value === 'object' && 'number' in value;
}

export function isExactObject(value: ExactJson): value is ExactObject {
  return value !== null && typeof value === 'object' && 'members' in value;
}
