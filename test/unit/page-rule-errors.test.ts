import { describe, expect, it } from 'vitest';
import { answerErrors, ruleFormErrors } from '../../client/src/answer/answer-errors.js';
import { fieldsFromRule } from '../../client/src/answer/rule-fields.js';
import type { AnswerRule } from '../../src/shared/answer-rules.js';
import { parseResponseConfig } from '../../src/shared/schemas/response-config.js';

/** What the server says about `rules`, as INVALID_RESPONSE_CONFIG words it. */
function refused(rules: unknown[], answer: Record<string, unknown> = {}): string {
  const parsed = parseResponseConfig({ status: 200, ...answer, rules });
  if (parsed.ok) throw new Error('the server took it');
  return `Invalid response configuration: ${parsed.message}`;
}

const errorsFor = (rules: AnswerRule[]) => answerErrors(refused(rules), 200, rules);

describe('the page: the server’s refusal of a rule', () => {
  it('puts each issue on its rule and field, in words', () => {
    const rules: AnswerRule[] = [{ answer: {} }, { name: 'fail three', answer: { status: 302 } }];
    expect(errorsFor(rules)).toEqual([
      { rule: 1, field: 'status', message: "Status 302 can't be used: choose 200–299 or 400–599." },
    ]);
    expect(
      errorsFor([
        {
          times: 0,
          chance: 2,
          when: { method: 'PO ST', path: '/a?b' },
          answer: { delayMs: 40_000, headers: [['Set-Cookie', 'a']] },
        },
      ]),
    ).toEqual([
      { rule: 0, field: 'method', message: 'Method must be a method name such as POST: letters only.' },
      { rule: 0, field: 'path', message: 'Not a path glob: a path has no ? or # (match the query with when.query).' },
      {
        rule: 0,
        field: 'times',
        message: 'Times must be a whole number of at least 1: how many matches this rule answers (empty: no limit).',
      },
      {
        rule: 0,
        field: 'chance',
        message: 'Chance must be a percentage above 0 and at most 100 (empty: every match).',
      },
      {
        rule: 0,
        field: 'answerHeaders',
        message: "Header 1: Set-Cookie can't be set here: Hookwatch never lets an answer set cookies.",
      },
      { rule: 0, field: 'delayMs', message: 'Delay must be a whole number of milliseconds from 0 to 30000.' },
    ]);
  });

  it('says an unknown placeholder in the body or a header, and condition issues by name', () => {
    expect(
      errorsFor([
        {
          answer: {
            body: 'hi {{json.a}} {{nope}}',
            headers: [
              ['X-A', '{{header.x}}'],
              ['X-B', '{{body}}'],
            ],
          },
        },
      ]),
    ).toEqual([
      {
        rule: 0,
        field: 'body',
        message:
          '{{nope}} is not a placeholder: use {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}.',
      },
      {
        rule: 0,
        field: 'answerHeaders',
        message:
          'Header 2: {{body}} is not a placeholder: use {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}.',
      },
    ]);
    expect(
      errorsFor([
        {
          when: {
            query: { 'hub.mode': 'x'.repeat(1025) },
            json: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])),
          },
          answer: {},
        },
      ]),
    ).toEqual([
      { rule: 0, field: 'query', message: 'hub.mode: the value can be at most 1024 characters.' },
      { rule: 0, field: 'json', message: 'At most 10 lines.' },
    ]);
  });

  it('keeps a rule’s quoted name whole when it holds "; ", and says what names no field on the rule', () => {
    expect(errorsFor([{ name: 'a; b: "c"', answer: { status: 302 } }])).toEqual([
      { rule: 0, field: 'status', message: "Status 302 can't be used: choose 200–299 or 400–599." },
    ]);
    expect(answerErrors(refused([{ colour: 'red', answer: {} }]))).toEqual([
      { rule: 0, field: undefined, message: 'A rule may only hold name, when, times, chance and answer.' },
    ]);
    expect(answerErrors(refused(Array.from({ length: 21 }, () => ({ answer: {} }))))).toEqual([
      { field: undefined, message: 'At most 20 rules.' },
    ]);
    // The default answer's issues stay its own.
    expect(
      answerErrors(refused([{ answer: { status: 302 } }], { status: 302 }), 302, [{ answer: { status: 302 } }]),
    ).toEqual([
      { field: 'status', message: "Status 302 can't be used: choose 200–299 or 400–599." },
      { rule: 0, field: 'status', message: "Status 302 can't be used: choose 200–299 or 400–599." },
    ]);
  });
});

describe('the page: a rule’s fields checked before asking the server', () => {
  const fields = fieldsFromRule({ answer: {} });

  it('passes empty fields, and catches numbers that are not numbers, lines without =, and unknown placeholders', () => {
    expect(ruleFormErrors(fields)).toEqual([]);
    expect(
      ruleFormErrors({ ...fields, status: '2x', delayMs: '1.5', times: 'three', chance: '20 %' }).map(
        (error) => error.field,
      ),
    ).toEqual(['status', 'delayMs', 'times', 'chance']);
    expect(ruleFormErrors({ ...fields, chance: '12.5', times: ' 3 ' })).toEqual([]);
    expect(ruleFormErrors({ ...fields, json: 'type=url_verification\nchallenge' })).toEqual([
      { field: 'json', message: 'Line 2: write one type=url_verification per line (* as the value: present at all).' },
    ]);
    expect(
      ruleFormErrors({
        ...fields,
        body: '{{json.challenge}} {{challenge}}',
        answerHeaders: 'X-A: {{seq}}\nX-B: {{what}}',
      }),
    ).toEqual([
      {
        field: 'body',
        message:
          '{{challenge}} is not a placeholder: use {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}.',
      },
      {
        field: 'answerHeaders',
        message:
          'Header 2: {{what}} is not a placeholder: use {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}} or {{seq}}.',
      },
    ]);
  });
});
