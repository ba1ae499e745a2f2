/**
 * Answer rules (docs/protocol.md "Answer rules"): which answer a captured
 * request gets. Pure and free of zod at run time, so the page (its rule editor and "which rule
 * would answer this request?") runs the very matcher the receiver does; schemas/response-config.ts
 * validates.
 *
 * A request is answered by the first rule that matches it and is not passed over (its `chance`
 * draw failed, or its `times` are used up), else by the endpoint's default answer. Matching and
 * the chance draws happen before the request is stored (`answerChoices`); the `times` counts live
 * in the store, which takes the first choice whose count is not used up in the same step that
 * numbers the request (store.ts, `chooseAnswer`), so the counts hold across instances.
 */
import { compileGlob } from './glob.js';
import type { ParamMap } from './schemas/captured-request.js';
import type { AnswerRule, RuleWhen } from './schemas/response-config.js';

// The rules' types come from their schema, as type-only imports: the page imports this module,
// and zod stays out of its bundle.
export type { AnswerRule, RuleAnswer, RuleWhen } from './schemas/response-config.js';

export const MAX_RULES = 20;
export const MAX_RULE_NAME_CHARS = 100;
/** Conditions per `query`, `headers` or `json` map. */
export const MAX_RULE_CONDITIONS = 10;

/** What a rule looks at in a request; read lazily, so a rule that never asks for the JSON body costs no parse. */
export interface RuleInput {
  method: string;
  subPath: string;
  query(): ParamMap;
  /** Every value of a header, by lower-case name. */
  header(lowerName: string): string[];
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json(): unknown;
}

/**
 * Who may answer a request, in order: a rule (`rule` its index) or the default (`rule` -1), with
 * the rule's `times` (0: no limit). The store takes the first whose count is not used up.
 */
export interface AnswerChoice {
  rule: number;
  times: number;
}

export const DEFAULT_CHOICE: AnswerChoice = Object.freeze({ rule: -1, times: 0 });
/** The choices of a request to an endpoint without rules. */
export const ONLY_DEFAULT: readonly AnswerChoice[] = Object.freeze([DEFAULT_CHOICE]);

/**
 * The choices for a request: the rules that match it and win their chance draw, up to the first
 * without `times` (it always answers), then the default. Without rules: the default alone, at no
 * cost. `random` is Math.random but for tests.
 */
export function answerChoices(
  rules: readonly AnswerRule[] | undefined,
  input: RuleInput,
  random: () => number = Math.random,
): readonly AnswerChoice[] {
  if (rules === undefined || rules.length === 0) return ONLY_DEFAULT;
  const matchers = compiledRules(rules);
  const choices: AnswerChoice[] = [];
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index] as AnswerRule;
    if (!(matchers[index] as Matcher)(input)) continue;
    if (rule.chance !== undefined && rule.chance < 1 && random() >= rule.chance) continue;
    choices.push({ rule: index, times: rule.times ?? 0 });
    if (rule.times === undefined) return choices;
  }
  choices.push(DEFAULT_CHOICE);
  return choices;
}

/**
 * Takes the first choice whose `times` is not used up and counts it in `counts` (rule index ->
 * answers given so far): the store calls this in the step that numbers the request.
 */
export function chooseAnswer(choices: readonly AnswerChoice[], counts: Record<number, number>): number {
  for (let at = 0; at < choices.length; at++) {
    const choice = choices[at] as AnswerChoice;
    if (choice.times === 0) return at;
    const used = counts[choice.rule] ?? 0;
    if (used < choice.times) {
      counts[choice.rule] = used + 1;
      return at;
    }
  }
  return choices.length - 1;
}

/** The indexes of the rules whose `when` holds for the request, ignoring `chance` and `times`: the page's "which rule would answer". */
export function matchingRules(rules: readonly AnswerRule[], input: RuleInput): number[] {
  const matchers = compiledRules(rules);
  return rules.flatMap((_, index) => ((matchers[index] as Matcher)(input) ? [index] : []));
}

type Matcher = (input: RuleInput) => boolean;

/** Compiled once per rule list: a configuration object lives unchanged until it is replaced. */
const compiled = new WeakMap<readonly AnswerRule[], Matcher[]>();

function compiledRules(rules: readonly AnswerRule[]): Matcher[] {
  let matchers = compiled.get(rules);
  if (!matchers) {
    matchers = rules.map((rule) => compileWhen(rule.when ?? {}));
    compiled.set(rules, matchers);
  }
  return matchers;
}

function compileWhen(when: RuleWhen): Matcher {
  const tests: Matcher[] = [];
  if (when.method !== undefined) {
    const method = when.method.toUpperCase();
    tests.push((input) => input.method.toUpperCase() === method);
  }
  if (when.path !== undefined) {
    const path = compileGlob(when.path);
    tests.push((input) => path(input.subPath));
  }
  for (const [name, expected] of Object.entries(when.query ?? {})) {
    tests.push((input) => {
      const query = input.query();
      return anyEquals(Object.hasOwn(query, name) ? query[name] : undefined, expected);
    });
  }
  for (const [name, expected] of Object.entries(when.headers ?? {})) {
    const lower = name.toLowerCase();
    tests.push((input) => anyEquals(input.header(lower), expected));
  }
  for (const [path, expected] of Object.entries(when.json ?? {})) {
    // A value is compared as JSON text no longer than the expected text, so a condition costs at
    // most its own length whatever the body holds ("*" only asks that the value be there).
    const wanted = expected === '*' ? 0 : expected.length + 1;
    tests.push((input) => {
      const text = jsonTextAt(input, path, wanted);
      return text !== undefined && (expected === '*' || text === expected);
    });
  }
  return (input) => tests.every((test) => test(input));
}

function anyEquals(values: string | string[] | undefined, expected: string): boolean {
  if (values === undefined) return false;
  if (typeof values === 'string') return expected === '*' || values === expected;
  return values.length > 0 && (expected === '*' || values.includes(expected));
}

/** The value at a dotted path (`items.0.id`); undefined when any step is missing. */
export function valueAt(json: unknown, steps: readonly string[]): unknown {
  let value = json;
  for (const step of steps) {
    if (value === null || typeof value !== 'object') return undefined;
    if (!Object.hasOwn(value, step)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/** How deep a value a rule or placeholder looks into; deeper, it is not inspected (a body of 200,000 nested arrays is still captured). */
export const MAX_INSPECTED_DEPTH = 256;

/**
 * The value at a dotted path of the request's JSON body as a rule compares it and a placeholder
 * writes it: a string as it is, anything else as its JSON text , at most `maxChars` long: a longer one is cut there (a placeholder's value) and a deeper one than
 * MAX_INSPECTED_DEPTH is undefined. Worked out once per request, path and length, however many
 * conditions and placeholders ask for it.
 */
export function jsonTextAt(input: RuleInput, path: string, maxChars: number): string | undefined {
  let memo = inspected.get(input);
  if (!memo) {
    memo = new Map();
    inspected.set(input, memo);
  }
  const key = `${maxChars}:${path}`;
  if (memo.has(key)) return memo.get(key);
  const value = valueAt(input.json(), path.split('.'));
  let text: string | undefined;
  if (typeof value === 'string') text = value;
  else if (value !== undefined) text = boundedJson(value, maxChars);
  memo.set(key, text);
  return text;
}

const inspected = new WeakMap<RuleInput, Map<string, string | undefined>>();

/**
 * JSON.stringify's text of a parsed JSON value, built only up to `maxChars` (+ one piece): what a
 * comparison or a placeholder can use, without turning a 1 MB object into text for each. The
 * text is cut at `maxChars`; undefined past MAX_INSPECTED_DEPTH.
 */
function boundedJson(value: unknown, maxChars: number): string | undefined {
  const pieces: string[] = [];
  let length = 0;
  const push = (piece: string) => {
    pieces.push(piece);
    length += piece.length;
  };
  const write = (item: unknown, depth: number): boolean => {
    if (length > maxChars) return true;
    if (depth > MAX_INSPECTED_DEPTH) return false;
    if (item === null || typeof item !== 'object') {
      push(JSON.stringify(item) ?? 'null');
      return true;
    }
    if (Array.isArray(item)) {
      push('[');
      for (let index = 0; index < item.length && length <= maxChars; index++) {
        if (index > 0) push(',');
        if (!write(item[index], depth + 1)) return false;
      }
      push(']');
      return true;
    }
    push('{');
    let first = true;
    for (const key of Object.keys(item)) {
      if (length > maxChars) break;
      push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      if (!write((item as Record<string, unknown>)[key], depth + 1)) return false;
    }
    push('}');
    return true;
  };
  if (!write(value, 0)) return undefined;
  const text = pieces.join('');
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}

/** The lazy inputs over a captured record, for the page (the receiver builds its own from the raw request). */
export function ruleInputOf(request: {
  method: string;
  subPath: string;
  query: ParamMap;
  headers: Array<[string, string]>;
  body: string;
  bodyEncoding: string;
  isJson: boolean;
}): RuleInput {
  let parsed: { value: unknown } | undefined;
  return {
    method: request.method,
    subPath: request.subPath,
    query: () => request.query,
    header: (lowerName) =>
      request.headers.filter(([name]) => name.toLowerCase() === lowerName).map(([, value]) => value),
    json: () => {
      if (!parsed)
        parsed = {
          value: request.isJson && request.bodyEncoding === 'utf8' ? parseOrUndefined(request.body) : undefined,
        };
      return parsed.value;
    },
  };
}

export function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
