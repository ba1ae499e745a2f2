import { describe, expect, it } from 'vitest';
import {
  conditionLines,
  headerLines,
  parseConditionLines,
  parseHeaderLines,
} from '../../client/src/answer/field-lines.js';
import { fieldsFromRule, normalRule, ruleFromFields, ruleSummary } from '../../client/src/answer/rule-fields.js';
import { ANSWER_PRESETS } from '../../src/shared/answer-presets.js';
import type { AnswerRule } from '../../src/shared/answer-rules.js';
import { parseResponseConfig } from '../../src/shared/schemas/response-config.js';

/** The rules as the server keeps them: parsed by its schema. */
function asServerKeeps(rules: AnswerRule[]): AnswerRule[] {
  const parsed = parseResponseConfig({ status: 200, rules });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value.rules ?? [];
}

describe('the page: a rule’s fields', () => {
  it('reads name=value lines at the first =, and names the lines that have none', () => {
    expect(parseConditionLines(' type = url_verification \n\nhub.mode=subscribe\nsig=a=b\nnothing here\nX=*')).toEqual({
      conditions: { type: 'url_verification', 'hub.mode': 'subscribe', sig: 'a=b', X: '*' },
      bad: [5],
    });
    expect(conditionLines({ a: '1', 'items.0.id': '*' })).toBe('a=1\nitems.0.id=*');
    expect(parseHeaderLines('Retry-After: 5\n\nX-A: b:c\nno colon')).toEqual([
      ['Retry-After', '5'],
      ['X-A', 'b:c'],
      ['no colon', ''],
    ]);
    expect(
      headerLines([
        ['Retry-After', '5'],
        ['X-A', 'b'],
      ]),
    ).toBe('Retry-After: 5\nX-A: b');
  });

  it('gives every preset back from its fields as the server keeps it, so a filled form has no edits', () => {
    for (const preset of ANSWER_PRESETS) {
      const [kept] = asServerKeeps([preset.rule(preset.parameter?.default)]) as [AnswerRule];
      // Fields say only what differs from the defaults: an explicit `application/json` or empty body goes.
      expect(normalRule(normalRule(kept))).toEqual(normalRule(kept));
      expect(asServerKeeps([normalRule(kept)])).toEqual([normalRule(kept)]);
    }
    const rule: AnswerRule = {
      name: 'fail three times first',
      when: {
        method: 'POST',
        path: '/github/*',
        query: { a: '1' },
        headers: { 'X-GitHub-Event': 'push' },
        json: { 'items.0.id': '*' },
      },
      times: 3,
      chance: 0.2,
      answer: { status: 503, body: 'no', contentType: 'text/plain', headers: [['Retry-After', '5']], delayMs: 250 },
    };
    expect(ruleFromFields(fieldsFromRule(rule))).toEqual(rule);
    expect(JSON.stringify(ruleFromFields(fieldsFromRule(rule)))).toBe(JSON.stringify(asServerKeeps([rule])[0]));
  });

  it('says a percentage as typed, and leaves out what is empty', () => {
    expect(fieldsFromRule({ chance: 0.2, answer: {} }).chance).toBe('20');
    expect(fieldsFromRule({ chance: 0.333, answer: {} }).chance).toBe('33.3');
    const empty = fieldsFromRule({ answer: {} });
    expect(empty).toMatchObject({
      name: '',
      method: '',
      times: '',
      chance: '',
      status: '',
      contentType: 'application/json',
      delayMs: '',
    });
    expect(ruleFromFields({ ...empty, name: '  ', query: '\n', delayMs: '0' })).toEqual({ answer: {} });
    // 204 never carries a body.
    expect(ruleFromFields({ ...empty, status: '204', body: 'x' })).toEqual({ answer: { status: 204 } });
  });

  it('sums a rule up in one line', () => {
    const line = (id: string, n?: number) =>
      ruleSummary((ANSWER_PRESETS.find((preset) => preset.id === id) as (typeof ANSWER_PRESETS)[number]).rule(n));
    expect(line('slack')).toBe('POST, json type=url_verification → 200 text/plain');
    expect(line('meta')).toBe('GET, query hub.mode=subscribe → 200 text/plain');
    expect(line('fail-then-succeed', 3)).toBe('every request, first 3 → 503 with Retry-After');
    expect(line('fail-percent', 20)).toBe('every request, 20 % of the time → 500');
    expect(line('slow', 5000)).toBe('every request → 200, after 5 s');
    expect(
      ruleSummary({ when: { path: '/github/**', headers: { 'X-GitHub-Event': 'push' } }, answer: { status: 202 } }),
    ).toBe('/github/**, header X-GitHub-Event=push → 202');
  });
});
