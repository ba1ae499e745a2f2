import { describe, expect, it } from 'vitest';
import { answeredBy, answerMark, wouldAnswer } from '../../client/src/detail/answered-by.js';
import { RequestLog } from '../../client/src/log/request-log.js';
import { ANSWER_PRESETS } from '../../src/shared/answer-presets.js';
import type { AnswerRule } from '../../src/shared/answer-rules.js';
import { capturedRequest } from '../helpers/captured.js';

const preset = (id: string, n?: number): AnswerRule =>
  (ANSWER_PRESETS.find((candidate) => candidate.id === id) as (typeof ANSWER_PRESETS)[number]).rule(n);
const slackCheck = capturedRequest({ body: '{"type":"url_verification","challenge":"abc"}' });
const other = capturedRequest({ method: 'GET', body: '', isJson: false, subPath: '/github/push' });

describe('the page: who answered a request, and who would now', () => {
  it('says what chose the answer a sender got', () => {
    expect(answeredBy({ status: 503, delayMs: 0, by: 'rule', rule: 1, name: 'fail three times first' })).toBe(
      'Answered by rule 2 “fail three times first”',
    );
    expect(answeredBy({ status: 503, delayMs: 0, by: 'rule', rule: 0 })).toBe('Answered by rule 1');
    expect(answeredBy({ status: 200, delayMs: 0, by: 'default' })).toBe('Answered by the default answer');
    expect(answeredBy({ status: 201, delayMs: 0, by: 'forwarder' })).toBe('Answered by your local app');
    expect(answeredBy({ status: 413, delayMs: 0, by: 'error' })).toBe(
      'Answered by Hookwatch itself: an error, not the configured answer',
    );
  });

  it('marks rows a rule or the local app answered, in words', () => {
    expect(answerMark({ status: 503, delayMs: 0, by: 'rule', rule: 2, name: 'x' })).toEqual({
      text: 'rule 3',
      label: 'Answered by rule 3 “x”',
    });
    expect(answerMark({ status: 201, delayMs: 0, by: 'forwarder' })).toEqual({
      text: 'local app',
      label: 'Answered by your local app',
    });
    expect(answerMark({ status: 200, delayMs: 0, by: 'default' })).toBeUndefined();
    expect(answerMark({ status: 413, delayMs: 0, by: 'error' })).toBeUndefined();
  });

  it('names the first rule that matches now, and what answers when it passes a request over', () => {
    expect(wouldAnswer([], slackCheck)).toBe('The default answer.');
    expect(wouldAnswer([preset('slack')], slackCheck)).toBe('Rule 1 “Slack URL verification”.');
    expect(wouldAnswer([preset('slack')], other)).toBe('The default answer.');
    expect(wouldAnswer([preset('meta'), preset('fail-then-succeed', 3)], slackCheck)).toBe(
      'Rule 2 “fail 3 times first”, while its 3 times last; else the default answer.',
    );
    expect(wouldAnswer([preset('fail-percent', 20), preset('slack'), preset('slow', 100)], slackCheck)).toBe(
      'Rule 1 “fail 20 %”, 20 % of the time; else rule 2 “Slack URL verification”.',
    );
    expect(wouldAnswer([{ times: 1, chance: 0.5, answer: {} }], other)).toBe(
      'Rule 1, 50 % of the time while its 1 time last; else the default answer.',
    );
  });
});

describe('the page: the local app’s answer to a held request', () => {
  it('replaces the record’s answer, pinned or held, and ignores a request not held', () => {
    const log = new RequestLog(() => 2);
    log.add(capturedRequest({ seq: 1 }));
    log.select(1, true);
    log.add(capturedRequest({ seq: 2 }));
    log.add(capturedRequest({ seq: 3 }));
    const local = { status: 201, delayMs: 0, by: 'forwarder' as const, droppedHeaders: ['set-cookie'] };
    expect(log.answered(3, local)?.answer).toEqual(local);
    expect(log.requests.at(-1)?.answer).toEqual(local);
    // Seq 1 left the log but stays open, pinned.
    expect(log.answered(1, local)?.seq).toBe(1);
    expect(log.selectedRequest?.answer).toEqual(local);
    expect(log.answered(9, local)).toBeUndefined();
  });
});
