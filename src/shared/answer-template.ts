/**
 * Placeholders in a rule answer's body and header values:
 * `{{json.<path>}}`, `{{query.<name>}}`, `{{header.<name>}}`, `{{method}}`, `{{path}}`, `{{seq}}`.
 * A missing value is empty. `{{json:<path>}}` inserts the value at the path as JSON, for a place
 * outside quotes in a JSON body (`{"nested":{{json:obj}}}`): an object or array as its JSON, a
 * string quoted, a missing or too-large value as `null`, so the answer stays valid JSON. Pure:
 * the page checks placeholders with it too.
 */
import { jsonTextAt, valueAt, type RuleInput } from './answer-rules.js';

type Part =
  string | { from: 'json' | 'jsonValue' | 'query' | 'header'; name: string } | { from: 'method' | 'path' | 'seq' };

/** A body or header value split into text and placeholders. */
export interface Template {
  parts: Part[];
  /** False when it has no placeholder: it is sent as written. */
  dynamic: boolean;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
/** Past this many characters a filled-in value is cut. */
export const MAX_FILLED_VALUE_CHARS = 64 * 1024;
/**
 * A whole filled-in text is cut here too: a body of many placeholders (each up to the cap
 * above) cannot turn one small request into a huge answer.
 */
export const MAX_FILLED_TEXT_CHARS = 256 * 1024;

/** The template, or the text of the first placeholder that is not one we know. */
export function parseTemplate(text: string): Template | { unknown: string } {
  const parts: Part[] = [];
  let at = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const inner = match[1] as string;
    const part = placeholderOf(inner);
    if (part === undefined) return { unknown: match[0] };
    if (match.index > at) parts.push(text.slice(at, match.index));
    parts.push(part);
    at = match.index + match[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return { parts, dynamic: parts.some((part) => typeof part !== 'string') };
}

function placeholderOf(inner: string): Part | undefined {
  if (inner === 'method' || inner === 'path' || inner === 'seq') return { from: inner };
  if (inner.startsWith('json:')) {
    const name = inner.slice('json:'.length);
    return name === '' || /\s/.test(name) ? undefined : { from: 'jsonValue', name };
  }
  const dot = inner.indexOf('.');
  const from = inner.slice(0, dot);
  const name = inner.slice(dot + 1);
  if (dot === -1 || name === '' || /\s/.test(name)) return undefined;
  if (from === 'json' || from === 'query') return { from, name };
  if (from === 'header') return { from, name: name.toLowerCase() };
  return undefined;
}

/**
 * The template filled in for one request, at most `maxChars` long. `escape` treats each value
 * before it is inserted (JSON string escaping in a JSON body; control characters removed in a
 * header value). The text around the placeholders is always written whole, and values are cut
 * to fit what is left, before escaping, so a cut never splits an escape or a literal (a JSON
 * body whose placeholders stand inside strings stays valid JSON). The work is bounded by the
 * answer's length, not by the request: each value is read once per request (`jsonTextAt`) and
 * only the part that fits is escaped.
 */
export function fillTemplate(
  template: Template,
  input: RuleInput,
  seq: number,
  escape: (value: string) => string,
  maxChars = MAX_FILLED_TEXT_CHARS,
): string {
  let room = maxChars;
  for (const part of template.parts) if (typeof part === 'string') room -= part.length;
  let text = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (part.from === 'jsonValue') {
      // JSON already: not escaped again in a JSON body (elsewhere cleaned as any value, a header's
      // control characters removed), and never cut (a cut value is not JSON): whole, or null.
      const json = jsonValueOf(input, part.name, Math.max(0, Math.min(room, MAX_FILLED_VALUE_CHARS)));
      const written = escape === escapeJsonContent ? json : escape(json);
      text += written;
      room -= written.length;
      continue;
    }
    if (room <= 0) continue;
    let value = valueOf(part, input, seq) ?? '';
    if (value.length > Math.min(room, MAX_FILLED_VALUE_CHARS))
      value = value.slice(0, Math.min(room, MAX_FILLED_VALUE_CHARS));
    let escaped = escape(value);
    // An escape can make a value longer (a control character takes six in JSON): cut the value, not its escape.
    while (escaped.length > room) {
      value = value.slice(0, Math.floor(value.length / 2));
      escaped = escape(value);
    }
    text += escaped;
    room -= escaped.length;
  }
  return text;
}

/** The value at `path` as JSON text when it is at most `maxChars` long; else, or when missing, `null`. */
function jsonValueOf(input: RuleInput, path: string, maxChars: number): string {
  const value = valueAt(input.json(), path.split('.'));
  if (value === undefined) return 'null';
  // One character more than fits says it does not: a string is measured once quoted.
  const text =
    typeof value === 'string'
      ? value.length + 2 <= maxChars
        ? JSON.stringify(value)
        : undefined
      : jsonTextAt(input, path, maxChars + 1);
  return text !== undefined && text.length <= maxChars ? text : 'null';
}

function valueOf(part: Exclude<Part, string>, input: RuleInput, seq: number): string | undefined {
  switch (part.from) {
    case 'method':
      return input.method;
    case 'path':
      return input.subPath;
    case 'seq':
      return String(seq);
    case 'json':
      return jsonTextAt(input, part.name, MAX_FILLED_VALUE_CHARS);
    case 'jsonValue':
      return jsonValueOf(input, part.name, MAX_FILLED_VALUE_CHARS);
    case 'query': {
      const query = input.query();
      const value = Object.hasOwn(query, part.name) ? query[part.name] : undefined;
      return Array.isArray(value) ? value[0] : value;
    }
    case 'header':
      return input.header(part.name)[0];
  }
}

/** JSON string content: the value between the quotes of a JSON string. */
export const escapeJsonContent = (value: string): string => JSON.stringify(value).slice(1, -1);

/** A header value keeps tabs and visible ASCII; CR, LF and every other control or non-ASCII character go. */
export const cleanHeaderValue = (value: string): string => value.replace(/[^\t\x20-\x7e]/g, '');
