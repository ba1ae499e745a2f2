import { describe, expect, it } from 'vitest';
import {
  answerChoices,
  chooseAnswer,
  matchingRules,
  ruleInputOf,
  type AnswerRule,
  type RuleInput,
} from '../../src/shared/answer-rules.js';
import {
  cleanHeaderValue,
  escapeJsonContent,
  fillTemplate,
  parseTemplate,
  type Template,
} from '../../src/shared/answer-template.js';
import { ANSWER_PRESETS } from '../../src/shared/answer-presets.js';
import { parseResponseConfig } from '../../src/shared/schemas/response-config.js';

const input = (
  fields: Partial<{
    method: string;
    subPath: string;
    query: Record<string, string | string[]>;
    headers: Array<[string, string]>;
    json: unknown;
  }> = {},
): RuleInput => ({
  method: fields.method ?? 'POST',
  subPath: fields.subPath ?? '',
  query: () => fields.query ?? {},
  header: (lower) => (fields.headers ?? []).filter(([name]) => name.toLowerCase() === lower).map(([, value]) => value),
  json: () => fields.json,
});

describe('answerChoices', () => {
  it('is the default alone without rules, and never reads the request', () => {
    const untouchable = new Proxy({} as RuleInput, {
      get() {
        throw new Error('read');
      },
    });
    expect(answerChoices(undefined, untouchable)).toEqual([{ rule: -1, times: 0 }]);
    expect(answerChoices([], untouchable)).toEqual([{ rule: -1, times: 0 }]);
  });

  it('lists matching rules in order up to the first without times, then the default', () => {
    const rules: AnswerRule[] = [
      { when: { method: 'get' }, answer: {} },
      { times: 2, answer: {} },
      { when: { path: '/a/*' }, times: 1, answer: {} },
      { when: { path: '/a/**' }, answer: {} },
      { answer: {} },
    ];
    expect(answerChoices(rules, input({ subPath: '/a/b' }))).toEqual([
      { rule: 1, times: 2 },
      { rule: 2, times: 1 },
      { rule: 3, times: 0 },
    ]);
    expect(answerChoices(rules, input({ method: 'GET' }))).toEqual([{ rule: 0, times: 0 }]);
  });

  it('passes over a rule whose chance draw fails', () => {
    const rules: AnswerRule[] = [{ chance: 0.3, answer: {} }];
    expect(answerChoices(rules, input(), () => 0.29)).toEqual([{ rule: 0, times: 0 }]);
    expect(answerChoices(rules, input(), () => 0.3)).toEqual([{ rule: -1, times: 0 }]);
    // chance 1 never draws.
    expect(answerChoices([{ chance: 1, answer: {} }], input(), () => 0.9999)).toEqual([{ rule: 0, times: 0 }]);
  });

  it('compares query, headers and JSON as text, "*" as present, any of repeated values', () => {
    const rules: AnswerRule[] = [
      {
        when: {
          query: { a: '2' },
          headers: { 'X-Kind': '*' },
          json: { 'items.1.id': '7', ok: 'true', obj: '{"x":1}' },
        },
        answer: {},
      },
    ];
    const matching = input({
      query: { a: ['1', '2'] },
      headers: [['x-kind', '']],
      json: { items: [{}, { id: 7 }], ok: true, obj: { x: 1 } },
    });
    expect(matchingRules(rules, matching)).toEqual([0]);
    expect(
      matchingRules(
        rules,
        input({
          query: { a: '1' },
          headers: [['x-kind', '']],
          json: { items: [{}, { id: 7 }], ok: true, obj: { x: 1 } },
        }),
      ),
    ).toEqual([]);
    expect(
      matchingRules(rules, input({ query: { a: '2' }, json: { items: [{}, { id: 7 }], ok: true, obj: { x: 1 } } })),
    ).toEqual([]);
    // Inherited names are not values.
    expect(
      matchingRules(
        [{ when: { query: { constructor: '*' }, json: { toString: '*' } }, answer: {} }],
        input({ json: {} }),
      ),
    ).toEqual([]);
  });

  it('reads a stored record for the page as the receiver reads the request', () => {
    const record = {
      method: 'POST',
      subPath: '/slack/events',
      query: {},
      headers: [['Content-Type', 'application/json']] as Array<[string, string]>,
      body: '{"type":"url_verification","challenge":"c"}',
      bodyEncoding: 'utf8',
      isJson: true,
    };
    const slack = ANSWER_PRESETS.find((preset) => preset.id === 'slack')?.rule() as AnswerRule;
    expect(matchingRules([slack], ruleInputOf(record))).toEqual([0]);
    expect(matchingRules([slack], ruleInputOf({ ...record, isJson: false }))).toEqual([]);
  });
});

describe('chooseAnswer', () => {
  it('takes the first choice with answers left and counts it', () => {
    const counts: Record<number, number> = {};
    const choices = [
      { rule: 0, times: 1 },
      { rule: 3, times: 0 },
    ];
    expect(chooseAnswer(choices, counts)).toBe(0);
    expect(chooseAnswer(choices, counts)).toBe(1);
    expect(chooseAnswer(choices, counts)).toBe(1);
    expect(counts).toEqual({ 0: 1 });
  });
});

describe('placeholders', () => {
  const fill = (text: string, request: RuleInput, escape = (value: string) => value) =>
    fillTemplate(parseTemplate(text) as Template, request, 9, escape);

  it('fills every kind, a missing value empty', () => {
    const request = input({
      method: 'PUT',
      subPath: '/x',
      query: { 'hub.challenge': ['a', 'b'] },
      headers: [['X-T', 'v']],
      json: { a: { b: [1, { c: 'd' }] } },
    });
    expect(
      fill(
        '{{method}} {{path}} {{seq}} {{query.hub.challenge}} {{header.x-t}} {{json.a.b.1.c}} {{json.a.b}} [{{json.nope}}]',
        request,
      ),
    ).toBe('PUT /x 9 a v d [1,{"c":"d"}] []');
    expect(fill('{{ method }}', request)).toBe('PUT');
  });

  it('escapes for a JSON body and cleans a header value', () => {
    const request = input({ json: { v: 'a"b\\c\n\u0001' } });
    expect(fill('{"x":"{{json.v}}"}', request, escapeJsonContent)).toBe('{"x":"a\\"b\\\\c\\n\\u0001"}');
    expect(JSON.parse(fill('{"x":"{{json.v}}"}', request, escapeJsonContent))).toEqual({ x: 'a"b\\c\n\u0001' });
    expect(cleanHeaderValue('a\r\nb\u0000c\u00e9\td')).toBe('abc\td');
  });

  it('names the first unknown placeholder, and leaves lone braces alone', () => {
    expect(parseTemplate('{{json.a}} {{body}}')).toEqual({ unknown: '{{body}}' });
    expect(parseTemplate('{{header.}}')).toEqual({ unknown: '{{header.}}' });
    expect(parseTemplate('{{query.a b}}')).toEqual({ unknown: '{{query.a b}}' });
    expect(parseTemplate('{ "a": { "b": 1 } } {{ and }')).toMatchObject({ dynamic: false });
  });
});

describe('every preset', () => {
  it('is a valid rule, with and without its parameter', () => {
    for (const preset of ANSWER_PRESETS) {
      const rules = [
        preset.rule(),
        ...(preset.parameter ? [preset.rule(preset.parameter.min), preset.rule(preset.parameter.max)] : []),
      ];
      const parsed = parseResponseConfig({ status: 200, rules });
      expect(parsed.ok, `${preset.id}: ${parsed.ok ? '' : parsed.message}`).toBe(true);
    }
  });
});

describe('a filled-in answer', () => {
  it('stays bounded however many placeholders a body holds', () => {
    const body = '{{json.a}}'.repeat(6000);
    const request = input({ json: { a: 'x'.repeat(60_000) } });
    const filled = fillTemplate(parseTemplate(body) as Template, request, 1, escapeJsonContent);
    expect(filled.length).toBe(256 * 1024);
  });
});
