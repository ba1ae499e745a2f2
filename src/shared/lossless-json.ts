/**
 * JSON parsed into a tree that keeps what JSON.parse loses: a number's text (so an integer past
 * 2^53, a 64-bit id, is seen for what it is), object keys in their order with duplicates, and
 * `__proto__` as an ordinary key. Used by the request diff and the type inference, in the page
 * and the CLI. Bounded: nesting past `maxDepth` is refused, not recursed into.
 */

export type JsonNode =
  | { kind: 'null' }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'number'; text: string; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'object'; entries: Array<[string, JsonNode]> };

/** Nesting deeper than any webhook body we know of; a parser stack stays far from its limit. */
export const MAX_JSON_DEPTH = 256;

export class JsonSyntaxError extends Error {}

/** The tree of `text`, or a JsonSyntaxError saying where it stops being JSON (or nests past `maxDepth`). */
export function parseJsonLossless(text: string, maxDepth = MAX_JSON_DEPTH): JsonNode {
  let at = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at character ${at}`);
  };
  const skipSpace = () => {
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      at++;
    }
  };
  const readString = (): string => {
    // JSON.parse checks the escapes and control characters of one string: the span is found here.
    const start = at;
    at++;
    for (;;) {
      const quote = text.indexOf('"', at);
      if (quote === -1) fail('unterminated string');
      let backslashes = 0;
      for (let i = quote - 1; i > start && text.charCodeAt(i) === 0x5c; i--) backslashes++;
      at = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    try {
      return JSON.parse(text.slice(start, at)) as string;
    } catch {
      return fail('invalid string');
    }
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const readValue = (depth: number): JsonNode => {
    if (depth > maxDepth) fail(`nested deeper than ${maxDepth}`);
    skipSpace();
    const char = text[at];
    if (char === '{') {
      at++;
      const entries: Array<[string, JsonNode]> = [];
      skipSpace();
      if (text[at] === '}') {
        at++;
        return { kind: 'object', entries };
      }
      for (;;) {
        skipSpace();
        if (text[at] !== '"') fail('expected a key');
        const key = readString();
        skipSpace();
        if (text[at] !== ':') fail('expected ":"');
        at++;
        entries.push([key, readValue(depth + 1)]);
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === '}') {
          at++;
          return { kind: 'object', entries };
        } else fail('expected "," or "}"');
      }
    }
    if (char === '[') {
      at++;
      const items: JsonNode[] = [];
      skipSpace();
      if (text[at] === ']') {
        at++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(readValue(depth + 1));
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === ']') {
          at++;
          return { kind: 'array', items };
        } else fail('expected "," or "]"');
      }
    }
    if (char === '"') return { kind: 'string', value: readString() };
    if (text.startsWith('true', at)) {
      at += 4;
      return { kind: 'boolean', value: true };
    }
    if (text.startsWith('false', at)) {
      at += 5;
      return { kind: 'boolean', value: false };
    }
    if (text.startsWith('null', at)) {
      at += 4;
      return { kind: 'null' };
    }
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (!match) return fail(char === undefined ? 'unexpected end' : 'unexpected character');
    at += match[0].length;
    return { kind: 'number', text: match[0], value: Number(match[0]) };
  };
  const root = readValue(0);
  skipSpace();
  if (at < text.length) fail('unexpected text after the value');
  return root;
}

/** The tree of `text`, or undefined when it is not JSON (or nests too deep). */
export function tryParseJsonLossless(text: string, maxDepth = MAX_JSON_DEPTH): JsonNode | undefined {
  try {
    return parseJsonLossless(text, maxDepth);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return undefined;
    throw error;
  }
}

/** An integer written in the JSON that a double cannot hold exactly (past ±2^53). */
export function isUnsafeInteger(node: Extract<JsonNode, { kind: 'number' }>): boolean {
  return /^-?\d+$/.test(node.text) && !Number.isSafeInteger(node.value);
}

/** The node as compact JSON text, numbers as written. */
export function toJsonText(node: JsonNode): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'boolean':
      return String(node.value);
    case 'number':
      return node.text;
    case 'string':
      return JSON.stringify(node.value);
    case 'array':
      return `[${node.items.map(toJsonText).join(',')}]`;
    case 'object':
      return `{${node.entries.map(([key, value]) => `${JSON.stringify(key)}:${toJsonText(value)}`).join(',')}}`;
  }
}
