// A rule as the form's fields hold it (text), and back; and the one line a folded rule shows.
// No DOM here: it is unit-tested.
import type { AnswerRule, RuleAnswer, RuleWhen } from '../../../src/shared/answer-rules.js';
import { parseTemplate } from '../../../src/shared/answer-template.js';
import type { RuleField } from './answer-errors.js';
import { formatDelay } from '../format.js';
import { conditionLines, headerLines, parseConditionLines, parseHeaderLines } from './field-lines.js';

/** Every field as typed. `chance` is a percentage; empty means "not set" (the server's default). */
export type RuleFields = Record<RuleField, string>;

/** Shown for an absent content type: what the receiver sends then. */
const DEFAULT_TYPE = 'application/json';

export function fieldsFromRule(rule: AnswerRule): RuleFields {
  const when = rule.when ?? {};
  const answer = rule.answer;
  return {
    name: rule.name ?? '',
    method: when.method ?? '',
    path: when.path ?? '',
    query: conditionLines(when.query),
    headers: conditionLines(when.headers),
    json: conditionLines(when.json),
    times: rule.times === undefined ? '' : String(rule.times),
    // 0.2 * 100 is 20.000000000000004: twelve digits say it as typed.
    chance: rule.chance === undefined ? '' : String(Number((rule.chance * 100).toPrecision(12))),
    status: answer.status === undefined ? '' : String(answer.status),
    contentType: answer.contentType ?? DEFAULT_TYPE,
    answerHeaders: headerLines(answer.headers ?? []),
    body: answer.body ?? '',
    delayMs: answer.delayMs === undefined ? '' : String(answer.delayMs),
  };
}

/**
 * The rule the fields say; what is empty (or the default) is left out, in the order the server
 * writes its keys, so a rule read back from fields it filled compares equal to itself.
 */
export function ruleFromFields(fields: RuleFields): AnswerRule {
  const when: RuleWhen = {};
  if (fields.method.trim() !== '') when.method = fields.method.trim();
  if (fields.path.trim() !== '') when.path = fields.path.trim();
  for (const key of ['query', 'headers', 'json'] as const) {
    const { conditions } = parseConditionLines(fields[key]);
    if (Object.keys(conditions).length > 0) when[key] = conditions;
  }
  const answer: RuleAnswer = {};
  if (fields.status.trim() !== '') answer.status = Number(fields.status);
  if (fields.body !== '' && answer.status !== 204) answer.body = fields.body;
  if (fields.contentType !== DEFAULT_TYPE) answer.contentType = fields.contentType as RuleAnswer['contentType'];
  const headers = parseHeaderLines(fields.answerHeaders);
  if (headers.length > 0) answer.headers = headers;
  if (fields.delayMs.trim() !== '' && Number(fields.delayMs) !== 0) answer.delayMs = Number(fields.delayMs);
  return {
    ...(fields.name.trim() !== '' ? { name: fields.name.trim() } : {}),
    ...(Object.keys(when).length > 0 ? { when } : {}),
    ...(fields.times.trim() !== '' ? { times: Number(fields.times) } : {}),
    ...(fields.chance.trim() !== '' ? { chance: Number(fields.chance) / 100 } : {}),
    answer,
  };
}

/** The same rule as its fields would give it back: rules compare equal this way whatever wrote them. */
export const normalRule = (rule: AnswerRule): AnswerRule => ruleFromFields(fieldsFromRule(rule));

/** `20 %`, `33.3 %` */
export const percent = (chance: number): string => `${Number((chance * 100).toPrecision(3))} %`;

/** What a folded rule says: `POST, json type=url_verification → 200 text/plain`, `every request, first 3 → 503 with Retry-After`. */
export function ruleSummary(rule: AnswerRule): string {
  const when = rule.when ?? {};
  const conditions = [
    when.method?.toUpperCase(),
    when.path,
    ...Object.entries(when.query ?? {}).map(([name, value]) => `query ${name}=${value}`),
    ...Object.entries(when.headers ?? {}).map(([name, value]) => `header ${name}=${value}`),
    ...Object.entries(when.json ?? {}).map(([path, value]) => `json ${path}=${value}`),
  ].filter((part) => part !== undefined);
  const limits = [
    rule.times === undefined ? undefined : `first ${rule.times}`,
    rule.chance === undefined ? undefined : `${percent(rule.chance)} of the time`,
  ].filter((part) => part !== undefined);
  const answer = rule.answer;
  const type = answer.contentType && answer.contentType !== DEFAULT_TYPE ? ` ${answer.contentType}` : '';
  const headers = answer.headers?.length ? ` with ${answer.headers.map(([name]) => name).join(', ')}` : '';
  const delay = answer.delayMs ? `, after ${formatDelay(answer.delayMs)}` : '';
  const what = [conditions.length > 0 ? conditions.join(', ') : 'every request', ...limits].join(', ');
  return `${what} → ${answer.status ?? 200}${type}${headers}${delay}`;
}

/**
 * Before applying: the rules whose `times` count starts again, since applying any change resets
 * every count (product decision 14). Undefined when no rule counts.
 */
export function countsResetNote(rules: readonly AnswerRule[]): string | undefined {
  const counted = rules.flatMap((rule, index) =>
    rule.times === undefined ? [] : [`${rule.name ? `“${rule.name}”` : `rule ${index + 1}`} (first ${rule.times})`],
  );
  if (counted.length === 0) return undefined;
  return `Applying starts ${counted.length === 1 ? 'this count' : 'these counts'} again: ${counted.join(', ')} will answer ${counted.length === 1 ? 'its' : 'their'} first matches again.`;
}

/**
 * A JSON answer that will not parse: said before it is applied, not found out by a sender. The
 * placeholders are filled with stand-ins (`{{json:…}}` with null, any other with text, as it is
 * inserted: string content), so `{"nested":{{json.obj}}}` is caught. Undefined when it parses,
 * is empty, is not JSON, or has an unknown placeholder (that error is said already).
 * `templated`: false for the default answer, whose body is sent as written.
 */
export function jsonBodyWarning(body: string, contentType: string, templated = true): string | undefined {
  if (contentType !== 'application/json' || body.trim() === '') return undefined;
  // The default answer has no placeholders: its body is sent as written.
  const template = templated ? parseTemplate(body) : { parts: [body], dynamic: false };
  if ('unknown' in template) return undefined;
  const sample = template.parts
    .map((part) => (typeof part === 'string' ? part : part.from === 'jsonValue' ? 'null' : 'x'))
    .join('');
  try {
    JSON.parse(sample);
    return undefined;
  } catch {
    const filled = template.dynamic ? ' once its placeholders are filled in' : '';
    return `Not valid JSON${filled}: senders get it as application/json all the same. A placeholder outside quotes needs {{json:<path>}}, which inserts the value as JSON.`;
  }
}
