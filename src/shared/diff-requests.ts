/**
 * What changed from one captured request to another: method, path, query,
 * headers (order and duplicates kept: the n-th `X-A` of one is compared with the n-th `X-A` of the
 * other), and the body: JSON structurally (one line per changed value, arrays by index, a key
 * that only moved is no change), url-encoded forms field by field, other text by lines,
 * anything else as bytes. Pure and bounded:
 * it runs in the page on bodies of up to a few MiB.
 */
import { bodyBytesOf, bodyTextOf } from './body-text.js';
import type { CapturedRequest, ParamMap } from './schemas/captured-request.js';
import { toJsonText, tryParseJsonLossless, type JsonNode } from './lossless-json.js';

export type LineKind = 'same' | 'added' | 'removed' | 'changed';

/**
 * One header or query parameter: in both (`same`/`changed`, or `moved`: the same value, out of
 * its order among the others), or in one only.
 */
export interface PairLine {
  kind: LineKind | 'moved';
  name: string;
  before?: string;
  after?: string;
}

/** One changed value in a JSON body; `path` like `$.pull_request.labels[2].name`. */
export interface JsonChange {
  kind: Exclude<LineKind, 'same'>;
  path: string;
  before?: string;
  after?: string;
}

export interface TextLine {
  kind: Exclude<LineKind, 'changed'>;
  text: string;
}

export type BodyDiff =
  | { kind: 'same'; bytes: number }
  | { kind: 'json'; changes: JsonChange[]; capped: boolean }
  | { kind: 'form'; fields: PairLine[] }
  | { kind: 'text'; lines: TextLine[]; capped: boolean }
  | { kind: 'bytes'; beforeBytes: number; afterBytes: number; firstDifference: number };

export interface RequestDiff {
  method: { before: string; after: string };
  path: { before: string; after: string };
  query: PairLine[];
  headers: PairLine[];
  body: BodyDiff;
  /** Nothing differs (the capture times and seqs aside). */
  same: boolean;
}

/** Changes listed at most; a body that differs everywhere says how many more there are. */
export const MAX_CHANGES = 500;
/** A value shown in a change line is cut to this many characters. */
const MAX_VALUE_CHARS = 200;
/** Line diffs compare at most this many cells (lines × lines) after the common start and end. */
const MAX_TEXT_CELLS = 4_000_000;

export function diffRequests(before: CapturedRequest, after: CapturedRequest): RequestDiff {
  const query = diffPairs(paramPairs(before.query), paramPairs(after.query));
  const headers = diffPairs(before.headers, after.headers);
  const body = diffBodies(before, after);
  const path = { before: before.subPath || '/', after: after.subPath || '/' };
  const method = { before: before.method, after: after.method };
  const same =
    method.before === method.after &&
    path.before === path.after &&
    body.kind === 'same' &&
    [...query, ...headers].every((line) => line.kind === 'same');
  return { method, path, query, headers, body, same };
}

function paramPairs(params: ParamMap): Array<[string, string]> {
  return Object.entries(params).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((item): [string, string] => [name, item]),
  );
}

/**
 * Pairs in `after`'s order; a pair only in `before` goes where it stood among the pairs before
 * it. Names match case-insensitively (HTTP header names do), occurrence by occurrence.
 */
export function diffPairs(
  before: ReadonlyArray<readonly [string, string]>,
  after: ReadonlyArray<readonly [string, string]>,
): PairLine[] {
  const keyed = (pairs: ReadonlyArray<readonly [string, string]>) => {
    const seen = new Map<string, number>();
    return pairs.map(([name]) => {
      const lower = name.toLowerCase();
      const count = seen.get(lower) ?? 0;
      seen.set(lower, count + 1);
      return `${lower}\n${count}`;
    });
  };
  const beforeKeys = keyed(before);
  const afterKeys = keyed(after);
  const beforeIndex = new Map(beforeKeys.map((key, index) => [key, index]));
  const afterSet = new Set(afterKeys);
  const lines: PairLine[] = [];
  let nextRemoved = 0;
  const flushRemoved = (upTo: number) => {
    for (; nextRemoved < upTo; nextRemoved++) {
      const [name, value] = before[nextRemoved] as readonly [string, string];
      if (!afterSet.has(beforeKeys[nextRemoved] as string)) lines.push({ kind: 'removed', name, before: value });
    }
  };
  const matches = afterKeys.map((key) => beforeIndex.get(key));
  const inOrder = longestIncreasing(matches);
  after.forEach(([name, value], index) => {
    const match = matches[index];
    if (match === undefined) return void lines.push({ kind: 'added', name, after: value });
    flushRemoved(match);
    const old = (before[match] as readonly [string, string])[1];
    // Order is part of what was sent: a pair out of the order the others kept is marked moved.
    lines.push({
      kind: old !== value ? 'changed' : inOrder.has(index) ? 'same' : 'moved',
      name,
      before: old,
      after: value,
    });
  });
  flushRemoved(before.length);
  return lines;
}

/**
 * The positions (in `values`) of a longest run of defined values that increases: the pairs that
 * kept their order; every other matched pair moved. Patience-style, O(n log n).
 */
function longestIncreasing(values: ReadonlyArray<number | undefined>): Set<number> {
  const tails: number[] = [];
  const previous = new Array<number>(values.length).fill(-1);
  values.forEach((value, index) => {
    if (value === undefined) return;
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((values[tails[middle] as number] as number) < value) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[index] = tails[low - 1] as number;
    tails[low] = index;
  });
  const kept = new Set<number>();
  for (let at = tails.at(-1) ?? -1; at !== -1; at = previous[at] as number) kept.add(at);
  return kept;
}

function diffBodies(before: CapturedRequest, after: CapturedRequest): BodyDiff {
  const beforeText = bodyTextOf(before);
  const afterText = bodyTextOf(after);
  if (beforeText !== undefined && afterText !== undefined) {
    if (beforeText === afterText) return { kind: 'same', bytes: new TextEncoder().encode(afterText).length };
    const beforeJson = before.isJson ? tryParseJsonLossless(beforeText) : undefined;
    const afterJson = after.isJson ? tryParseJsonLossless(afterText) : undefined;
    if (beforeJson && afterJson) return diffJson(beforeJson, afterJson);
    // Two url-encoded forms: field by field, decoded, as the query is.
    if (before.form && after.form)
      return { kind: 'form', fields: diffPairs(paramPairs(before.form), paramPairs(after.form)) };
    return diffText(beforeText, afterText);
  }
  const a = bodyBytesOf(before);
  const b = bodyBytesOf(after);
  let first = 0;
  while (first < a.length && first < b.length && a[first] === b[first]) first++;
  if (first === a.length && first === b.length) return { kind: 'same', bytes: a.length };
  return { kind: 'bytes', beforeBytes: a.length, afterBytes: b.length, firstDifference: first };
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const INTEGER = /^-?\d+$/;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function shown(node: JsonNode): string {
  const text = toJsonText(node);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** Same value: numbers by their value (1.0 is 1), everything else by its text. */
function sameLeaf(a: JsonNode, b: JsonNode): boolean {
  // Two integers by their digits (two 64-bit ids can be the same double); otherwise 1.0 is 1.
  if (a.kind === 'number' && b.kind === 'number')
    return INTEGER.test(a.text) && INTEGER.test(b.text) ? a.text === b.text : a.value === b.value;
  return toJsonText(a) === toJsonText(b);
}

/** Object entries by key; a repeated key counts as its last value, as JSON.parse reads it. */
function entriesByKey(entries: Array<[string, JsonNode]>): Map<string, JsonNode> {
  return new Map(entries);
}

export function diffJson(before: JsonNode, after: JsonNode): BodyDiff {
  const changes: JsonChange[] = [];
  let more = 0;
  const add = (change: JsonChange) => {
    if (changes.length < MAX_CHANGES) changes.push(change);
    else more++;
  };
  const walk = (a: JsonNode, b: JsonNode, path: string) => {
    if (a.kind === 'object' && b.kind === 'object') {
      const left = entriesByKey(a.entries);
      const right = entriesByKey(b.entries);
      for (const [key, value] of right) {
        const old = left.get(key);
        if (old === undefined) add({ kind: 'added', path: childPath(path, key), after: shown(value) });
        else walk(old, value, childPath(path, key));
      }
      for (const [key, value] of left)
        if (!right.has(key)) add({ kind: 'removed', path: childPath(path, key), before: shown(value) });
      return;
    }
    if (a.kind === 'array' && b.kind === 'array') {
      const common = Math.min(a.items.length, b.items.length);
      for (let i = 0; i < common; i++) walk(a.items[i] as JsonNode, b.items[i] as JsonNode, childPath(path, i));
      for (let i = common; i < b.items.length; i++)
        add({ kind: 'added', path: childPath(path, i), after: shown(b.items[i] as JsonNode) });
      for (let i = common; i < a.items.length; i++)
        add({ kind: 'removed', path: childPath(path, i), before: shown(a.items[i] as JsonNode) });
      return;
    }
    if (!sameLeaf(a, b)) add({ kind: 'changed', path, before: shown(a), after: shown(b) });
  };
  walk(before, after, '$');
  return { kind: 'json', changes, capped: more > 0 };
}

/** Lines that differ, with the lines around them kept as `same`: a longest-common-subsequence diff between the common start and end. */
export function diffText(before: string, after: string): BodyDiff {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const lines: TextLine[] = a.slice(0, start).map((text) => ({ kind: 'same', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  let capped = false;
  if (midA.length * midB.length > MAX_TEXT_CELLS) {
    // Too many lines to align: one block out, one block in.
    capped = true;
    for (const text of midA) lines.push({ kind: 'removed', text });
    for (const text of midB) lines.push({ kind: 'added', text });
  } else {
    // lengths[i][j]: the longest common subsequence of midA[i..] and midB[j..].
    const width = midB.length + 1;
    const lengths = new Uint32Array((midA.length + 1) * width);
    for (let i = midA.length - 1; i >= 0; i--) {
      for (let j = midB.length - 1; j >= 0; j--) {
        lengths[i * width + j] =
          midA[i] === midB[j]
            ? (lengths[(i + 1) * width + j + 1] as number) + 1
            : Math.max(lengths[(i + 1) * width + j] as number, lengths[i * width + j + 1] as number);
      }
    }
    let i = 0;
    let j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        lines.push({ kind: 'same', text: midA[i++] as string });
        j++;
      } else if (
        j < midB.length &&
        (i === midA.length || (lengths[i * width + j + 1] as number) > (lengths[(i + 1) * width + j] as number))
      ) {
        // On a tie the removed line goes first, as diff(1) shows it.
        lines.push({ kind: 'added', text: midB[j++] as string });
      } else {
        lines.push({ kind: 'removed', text: midA[i++] as string });
      }
    }
  }
  for (const text of a.slice(endA)) lines.push({ kind: 'same', text });
  return { kind: 'text', lines, capped };
}
