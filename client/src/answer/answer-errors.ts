// What the server says about a refused answer (INVALID_RESPONSE_CONFIG), field by field and in
// words: "headers.0: header Set-Cookie may not be configured" becomes "Header 1: Set-Cookie can't
// be set here: Hookwatch never lets an answer set cookies." A rule's issues
// ("rules.2.answer.status (rule "x"): …") go on that rule's field. No DOM here: it is unit-tested.
import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import { MAX_RULE_CONDITIONS, MAX_RULE_NAME_CHARS } from '../../../src/shared/answer-rules.js';
import { parseTemplate } from '../../../src/shared/answer-template.js';
import {
  MAX_RESPONSE_BODY_BYTES,
  MAX_RESPONSE_BODY_ESCAPED_BYTES,
  MAX_RESPONSE_DELAY_MS,
  MAX_RESPONSE_HEADERS,
} from '../../../src/shared/response-limits.js';
import { headerColonError, parseConditionLines, parseHeaderLines } from './field-lines.js';

/** The default answer's fields, as the server's messages name them. */
export type AnswerField = 'status' | 'delayMs' | 'contentType' | 'headers' | 'body';

/** A rule's fields in the form: `headers` are its `when` headers, `answerHeaders` its answer's. */
export type RuleField =
  | 'name'
  | 'method'
  | 'path'
  | 'query'
  | 'headers'
  | 'json'
  | 'times'
  | 'chance'
  | 'status'
  | 'contentType'
  | 'answerHeaders'
  | 'body'
  | 'delayMs';

/** An issue with the default answer (`rule` undefined) or with rule `rule` (its index). `field` undefined: it names no field the form has. */
export type FieldError =
  | { rule?: undefined; field: AnswerField | undefined; message: string }
  | { rule: number; field: RuleField | undefined; message: string };

const FIELDS: readonly string[] = ['status', 'delayMs', 'contentType', 'headers', 'body'];
const SERVER_PREFIX = 'Invalid response configuration: ';
const RANGE = '200–299 or 400–599';

function kb(bytes: number): string {
  return `${Math.round(bytes / 1024)} KB`;
}

/** Why a header name is refused, by name (the server's DENIED_RESPONSE_HEADERS, in words). */
function deniedReason(name: string): string {
  const lower = name.toLowerCase();
  if (lower.startsWith('set-cookie')) return 'Hookwatch never lets an answer set cookies.';
  if (lower === 'location' || lower === 'refresh') return 'Hookwatch never lets an answer send senders elsewhere.';
  if (lower === 'content-type') return 'choose it under Type instead.';
  if (lower.startsWith('x-hookwatch-')) return "that name is kept for Hookwatch's own answers.";
  if (lower.startsWith(':')) return 'names starting with ":" belong to HTTP/2 itself.';
  if (
    /^(content-length|content-encoding|transfer-encoding|connection|keep-alive|upgrade|trailer|te|proxy-.*)$/.test(
      lower,
    )
  )
    return 'Hookwatch frames the answer itself.';
  return "it would change how browsers treat Hookwatch's pages.";
}

const PLACEHOLDERS = '{{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}';
const unknownPlaceholder = (placeholder: string) => `${placeholder} is not a placeholder: use ${PLACEHOLDERS}.`;

/** One header issue (`headers.N: …`) in words; `index` counts from 0 among the header lines. */
function headerMessage(index: number, text: string): string {
  const which = `Header ${index + 1}`;
  const placeholder = /^unknown placeholder (.*?): use/s.exec(text);
  if (placeholder) return `${which}: ${unknownPlaceholder(placeholder[1] as string)}`;
  const badName = /^header name "(.*)" is not a valid HTTP token/.exec(text);
  if (badName)
    return `${which}: “${badName[1]}” is not a header: write one Name: value per line (the name: letters, digits and - only).`;
  const denied = /^header (.+) may not be configured$/.exec(text);
  if (denied) return `${which}: ${denied[1]} can't be set here: ${deniedReason(denied[1] as string)}`;
  const badValue = /^header (.+) value must be/.exec(text);
  if (badValue) return `${which}: the value of ${badValue[1]} must be one line of at most 1024 plain ASCII characters.`;
  if (/pair of strings/.test(text)) return `${which}: write it as Name: value.`;
  return `${which}: ${text}`;
}

/** One issue of the server's message (`path: text`) in words. `status`: the status that was sent. */
function inWords(field: AnswerField, index: number | undefined, text: string, status: number | undefined): string {
  switch (field) {
    case 'status':
      return /200-299/.test(text) && status !== undefined && Number.isInteger(status)
        ? `Status ${status} can't be used: choose ${RANGE}.`
        : `Status must be a whole number: ${RANGE}.`;
    case 'delayMs':
      return `Delay must be a whole number of milliseconds from 0 to ${MAX_RESPONSE_DELAY_MS}.`;
    case 'contentType':
      return 'Type must be one of the types listed.';
    case 'body': {
      const placeholder = /^unknown placeholder (.*?): use/s.exec(text);
      if (placeholder) return unknownPlaceholder(placeholder[1] as string);
      return /escaped/.test(text)
        ? `The body is too long once stored: control characters count as 6 bytes each, and at most ${kb(MAX_RESPONSE_BODY_ESCAPED_BYTES)} fit.`
        : `The body can be at most ${kb(MAX_RESPONSE_BODY_BYTES)} (UTF-8).`;
    }
    case 'headers':
      return index === undefined
        ? `At most ${MAX_RESPONSE_HEADERS} headers: one per line.`
        : headerMessage(index, text);
  }
}

/**
 * The server's INVALID_RESPONSE_CONFIG message, one error per issue, in the form's words.
 * `status`: the status the form sent, and `rules` the rules it sent, to name a refused status.
 */
export function answerErrors(serverMessage: string, status?: number, rules: readonly AnswerRule[] = []): FieldError[] {
  const text = serverMessage.startsWith(SERVER_PREFIX) ? serverMessage.slice(SERVER_PREFIX.length) : serverMessage;
  return splitIssues(text).map((issue) => {
    const rule = RULE_ISSUE.exec(issue);
    if (rule) return ruleError(Number(rule[1]), (rule[2] ?? '').split('.').slice(1), rule[3] as string, rules);
    if (issue.startsWith('rules: ')) return { field: undefined, message: sentence(issue.slice('rules: '.length)) };
    const match = /^([A-Za-z]+)((?:\.\d+)*): (.*)$/s.exec(issue);
    const name = match?.[1];
    if (!match || !name || !FIELDS.includes(name)) return { field: undefined, message: issue };
    const field = name as AnswerField;
    const index = match[2] ? Number(match[2].split('.')[1]) : undefined;
    return { field, message: inWords(field, index, match[3] as string, status) };
  });
}

/** `rules.2.answer.status (rule "fail three"): text`: the index, the path inside the rule, the text. A rule's name is JSON-quoted. */
const RULE_ISSUE = /^rules\.(\d+)((?:\.[^\s:]*)*)(?: \(rule "(?:[^"\\]|\\.)*"\))?: (.*)$/s;

/** One issue of rule `rule`, `path` the steps inside it (`['answer', 'status']`). */
function ruleError(rule: number, path: string[], text: string, rules: readonly AnswerRule[]): FieldError {
  const [first, second, ...rest] = path;
  const asIs: FieldError = { rule, field: undefined, message: sentence(text) };
  switch (first) {
    case 'name':
      return { rule, field: 'name', message: `The name can be at most ${MAX_RULE_NAME_CHARS} characters.` };
    case 'times':
      return { rule, field: 'times', message: TIMES };
    case 'chance':
      return { rule, field: 'chance', message: CHANCE };
    case 'when':
      if (second === 'method')
        return { rule, field: 'method', message: 'Method must be a method name such as POST: letters only.' };
      if (second === 'path')
        return { rule, field: 'path', message: `Not a path glob: ${/is not a glob: (.*)$/s.exec(text)?.[1] ?? text}.` };
      if (second === 'query' || second === 'headers' || second === 'json')
        return { rule, field: second, message: conditionMessage(rest.join('.'), text) };
      return asIs;
    case 'answer': {
      if (second === 'headers')
        return {
          rule,
          field: 'answerHeaders',
          message: inWords('headers', rest[0] === undefined ? undefined : Number(rest[0]), text, undefined),
        };
      if (second !== undefined && FIELDS.includes(second))
        return {
          rule,
          field: second as RuleField,
          message: inWords(second as AnswerField, undefined, text, rules[rule]?.answer.status),
        };
      return asIs;
    }
    default:
      return asIs;
  }
}

/** The server's words as a sentence of the page's: `at most 20 rules` -> `At most 20 rules.` */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${text.endsWith('.') ? '' : '.'}`;

const TIMES = 'Times must be a whole number of at least 1: how many matches this rule answers (empty: no limit).';
const CHANCE = 'Chance must be a percentage above 0 and at most 100 (empty: every match).';

/** An issue with a `name=value` condition; `name` the condition's name, when the server named one. */
function conditionMessage(name: string, text: string): string {
  if (/conditions$/.test(text)) return `At most ${MAX_RULE_CONDITIONS} lines.`;
  if (/must not be empty|Invalid key/.test(text)) return 'Each line needs a name before its =.';
  if (/must be at most 256/.test(text)) return 'A name can be at most 256 characters.';
  if (/values must be at most/.test(text)) return `${name}: the value can be at most 1024 characters.`;
  return name === '' ? text : `${name}: ${text}`;
}

/** Issues are joined with "; ", each `path: message`; a header name quoted (as JSON) in one may hold "; " too. */
function splitIssues(text: string): string[] {
  const issues: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted && char === '\\') i++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === ';' && text[i + 1] === ' ') {
      issues.push(text.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  issues.push(text.slice(start));
  return issues.filter((issue) => issue !== '');
}

/** What the form can tell before asking the server: numbers that are not numbers, header lines with no colon. */
export function formErrors(status: string, delayMs: string, headers = ''): FieldError[] {
  const errors: FieldError[] = [];
  if (!/^\s*\d+\s*$/.test(status))
    errors.push({ field: 'status', message: `Status must be a whole number: ${RANGE}.` });
  if (!/^\s*\d*\s*$/.test(delayMs))
    errors.push({
      field: 'delayMs',
      message: `Delay must be a whole number of milliseconds from 0 to ${MAX_RESPONSE_DELAY_MS}.`,
    });
  const colon = headerColonError(headers);
  if (colon) errors.push({ field: 'headers', message: colon });
  return errors;
}

/** A rule's fields as typed (a percentage for `chance`): what the form can tell before asking the server. */
export function ruleFormErrors(
  fields: Readonly<Record<RuleField, string>>,
): Array<{ field: RuleField; message: string }> {
  const errors: Array<{ field: RuleField; message: string }> = [];
  const wholeOrEmpty = /^\s*\d*\s*$/;
  if (!wholeOrEmpty.test(fields.status))
    errors.push({ field: 'status', message: `Status must be a whole number: ${RANGE}.` });
  if (!wholeOrEmpty.test(fields.delayMs))
    errors.push({
      field: 'delayMs',
      message: `Delay must be a whole number of milliseconds from 0 to ${MAX_RESPONSE_DELAY_MS}.`,
    });
  if (!wholeOrEmpty.test(fields.times)) errors.push({ field: 'times', message: TIMES });
  if (!/^\s*(\d+(\.\d*)?|\.\d+)?\s*$/.test(fields.chance)) errors.push({ field: 'chance', message: CHANCE });
  for (const field of ['query', 'headers', 'json'] as const) {
    const { bad } = parseConditionLines(fields[field]);
    const example = field === 'json' ? 'type=url_verification' : field === 'headers' ? 'X-Event=push' : 'name=value';
    if (bad.length > 0)
      errors.push({
        field,
        message: `Line ${bad.join(', ')}: write one ${example} per line (* as the value: present at all).`,
      });
  }
  const body = parseTemplate(fields.body);
  if ('unknown' in body) errors.push({ field: 'body', message: unknownPlaceholder(body.unknown) });
  const headers = parseHeaderLines(fields.answerHeaders)
    .map(([, value], index) => ({ index, template: parseTemplate(value) }))
    .flatMap(({ index, template }) =>
      'unknown' in template ? [`Header ${index + 1}: ${unknownPlaceholder(template.unknown)}`] : [],
    );
  const colon = headerColonError(fields.answerHeaders);
  if (colon) headers.unshift(colon);
  if (headers.length > 0) errors.push({ field: 'answerHeaders', message: headers.join('\n') });
  return errors;
}
