/**
 * The receiver's side of answer rules (answer-rules.ts): what a rule sees of a raw request, the
 * record's `answer` each choice gives, and the answer a choice sends, its placeholders filled in.
 * Everything that depends only on the configuration is built once per configuration object (a
 * store keeps that object until the configuration changes).
 */
import type { FastifyRequest } from 'fastify';
import { parseParams, subPathOf } from '../shared/request-target.js';
import {
  answerChoices,
  ONLY_DEFAULT,
  parseOrUndefined,
  type AnswerChoice,
  type AnswerRule,
  type RuleInput,
} from '../shared/answer-rules.js';
import {
  cleanHeaderValue,
  escapeJsonContent,
  fillTemplate,
  parseTemplate,
  type Template,
} from '../shared/answer-template.js';
import type { RecordedAnswer } from '../shared/schemas/captured-request.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';

/** A header value filled in from placeholders is at most this long. */
const MAX_FILLED_HEADER_CHARS = 8192;

/** What a sender is answered with: a default answer, or a rule's with its defaults filled in. */
export type Answer = Omit<ResponseConfig, 'rules'>;

/** A rule's answer with the defaults of decision 14 (200, no body, text as JSON, no headers, no delay), and its templates. */
interface PreparedRule {
  answer: Answer;
  body: Template | undefined;
  headers: Array<Template | undefined>;
}

interface Prepared {
  /** The record's `answer` JSON for the default (index 0) and each rule (index + 1). */
  answerJson: string[];
  rules: PreparedRule[];
}

const prepared = new WeakMap<ResponseConfig, Prepared>();

function prepare(response: ResponseConfig): Prepared {
  let ready = prepared.get(response);
  if (ready) return ready;
  const rules = (response.rules ?? []).map(prepareRule);
  const answerJson = [
    JSON.stringify({ status: response.status, delayMs: response.delayMs, by: 'default' } satisfies RecordedAnswer),
    ...rules.map(({ answer }, index) => {
      const name = response.rules?.[index]?.name;
      const recorded: RecordedAnswer = { status: answer.status, delayMs: answer.delayMs, by: 'rule', rule: index };
      if (name !== undefined) recorded.name = name;
      return JSON.stringify(recorded);
    }),
  ];
  ready = { answerJson, rules };
  prepared.set(response, ready);
  return ready;
}

function prepareRule(rule: AnswerRule): PreparedRule {
  const answer: Answer = {
    status: rule.answer.status ?? 200,
    body: rule.answer.body ?? '',
    contentType: rule.answer.contentType ?? 'application/json',
    headers: rule.answer.headers ?? [],
    delayMs: rule.answer.delayMs ?? 0,
  };
  const dynamic = (text: string) => {
    const template = parseTemplate(text);
    // Validated before it was stored: an unknown placeholder never gets here.
    return 'parts' in template && template.dynamic ? template : undefined;
  };
  return { answer, body: dynamic(answer.body), headers: answer.headers.map(([, value]) => dynamic(value)) };
}

/** The record's `answer` JSON of each choice. */
export function recordedAnswers(response: ResponseConfig, choices: readonly AnswerChoice[]): string[] {
  const { answerJson } = prepare(response);
  return choices.map((choice) => answerJson[choice.rule + 1] as string);
}

/** Who may answer this request (answer-rules.ts); the default alone, at no cost, without rules. */
export function choicesFor(response: ResponseConfig, input: () => RuleInput): readonly AnswerChoice[] {
  return response.rules === undefined || response.rules.length === 0
    ? ONLY_DEFAULT
    : answerChoices(response.rules, input());
}

/**
 * The answer `choice` sends: the configuration itself for the default (so its prepared header
 * lines are reused), a rule's prepared answer, or for a rule with placeholders a new answer with
 * them filled in: JSON-escaped in a JSON body, control characters removed in a header value.
 */
export function answerOf(
  response: ResponseConfig,
  choice: AnswerChoice,
  inputOf: () => RuleInput,
  seq: number,
): Answer {
  if (choice.rule === -1) return response;
  const rule = prepare(response).rules[choice.rule];
  if (!rule) return response;
  if (rule.body === undefined && rule.headers.every((header) => header === undefined)) return rule.answer;
  const { answer } = rule;
  const input = inputOf();
  const bodyEscape = answer.contentType === 'application/json' ? escapeJsonContent : (value: string) => value;
  return {
    ...answer,
    body: rule.body ? fillTemplate(rule.body, input, seq, bodyEscape) : answer.body,
    headers: answer.headers.map(([name, value], index) => {
      const template = rule.headers[index];
      return [name, template ? fillTemplate(template, input, seq, cleanHeaderValue, MAX_FILLED_HEADER_CHARS) : value];
    }),
  };
}

/** What a rule sees of a request as received (before any redaction), each part read only when a rule asks. */
export function requestRuleInput(
  request: FastifyRequest,
  endpointPath: string,
  body: { bytes: Buffer; truncated: boolean },
): RuleInput {
  const url = request.raw.url ?? '';
  const rawHeaders = request.raw.rawHeaders;
  let query: ReturnType<typeof parseParams> | undefined;
  let json: { value: unknown } | undefined;
  return {
    method: request.method,
    subPath: subPathOf(url, endpointPath),
    query: () => {
      if (query === undefined) {
        const at = url.indexOf('?');
        query = at === -1 ? {} : parseParams(url.slice(at + 1));
      }
      return query;
    },
    header: (lowerName) => {
      const values: string[] = [];
      for (let i = 0; i + 1 < rawHeaders.length; i += 2)
        if ((rawHeaders[i] as string).toLowerCase() === lowerName) values.push(rawHeaders[i + 1] as string);
      return values;
    },
    json: () => {
      json ??= { value: body.truncated ? undefined : parseOrUndefined(body.bytes.toString()) };
      return json.value;
    },
  };
}
