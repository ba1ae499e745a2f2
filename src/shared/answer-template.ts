/**
 * Placeholders in a rule answer's body and header values (product decision 14):
 * `{{json.<path>}}`, `{{query.<name>}}`, `{{header.<name>}}`, `{{method}}`, `{{path}}`, `{{seq}}`.
 * A missing value is empty. Pure: the page checks placeholders with it too.
 */
import { jsonText, valueAt, type RuleInput } from './answer-rules.js';

type Part = string | { from: 'json' | 'query' | 'header'; name: string; steps: string[] } | { from: 'method' | 'path' | 'seq' };

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
  const dot = inner.indexOf('.');
  const from = inner.slice(0, dot);
  const name = inner.slice(dot + 1);
  if (dot === -1 || name === '' || /\s/.test(name)) return undefined;
  if (from === 'json') return { from, name, steps: name.split('.') };
  if (from === 'query') return { from, name, steps: [] };
  if (from === 'header') return { from, name: name.toLowerCase(), steps: [] };
  return undefined;
}

/**
 * The template filled in for one request. `escape` treats each value before it is inserted (JSON
 * string escaping in a JSON body; control characters removed in a header value).
 */
export function fillTemplate(template: Template, input: RuleInput, seq: number, escape: (value: string) => string): string {
  let text = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      text += part;
    } else {
      const value = valueOf(part, input, seq) ?? '';
      text += escape(value.length > MAX_FILLED_VALUE_CHARS ? value.slice(0, MAX_FILLED_VALUE_CHARS) : value);
    }
    if (text.length > MAX_FILLED_TEXT_CHARS) return text.slice(0, MAX_FILLED_TEXT_CHARS);
  }
  return text;
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
      return jsonText(valueAt(input.json(), part.steps));
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
