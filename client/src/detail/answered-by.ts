// Who answered a captured request's sender, and who would answer it now, in words; and the
// short mark a list row carries. No DOM here: it is unit-tested.
import { matchingRules, ruleInputOf, type AnswerRule } from '../../../src/shared/answer-rules.js';
import type { CapturedRequest, RecordedAnswer } from '../../../src/shared/schemas/captured-request.js';
import { percent } from '../answer/rule-fields.js';

/** `rule 2 “fail three times first”`: numbered from 1, as the form shows rules. */
export function ruleName(index: number, name: string | undefined): string {
  return `rule ${index + 1}${name ? ` “${name}”` : ''}`;
}

/** `Answered by rule 2 “fail three times first”`, `Answered by the default answer`, `Answered by your local app`. */
export function answeredBy(answer: RecordedAnswer): string {
  switch (answer.by) {
    case 'rule':
      return `Answered by ${ruleName(answer.rule ?? 0, answer.name)}`;
    case 'forwarder':
      return 'Answered by your local app';
    case 'error':
      return 'Answered by Hookwatch itself: an error, not the configured answer';
    default:
      return 'Answered by the default answer';
  }
}

/**
 * Which rule would answer `request` if it came now: the first rule whose `when` holds; when that
 * one answers only some matches (times, chance), the ones after it too, down to the default.
 * `Rule 1 “fail 3 times first”, while its 3 times last; else the default answer.`
 */
export function wouldAnswer(rules: readonly AnswerRule[], request: CapturedRequest): string {
  const parts: string[] = [];
  let always = false;
  for (const index of matchingRules(rules, ruleInputOf(request))) {
    const rule = rules[index] as AnswerRule;
    const limits = [
      rule.chance === undefined ? undefined : `${percent(rule.chance)} of the time`,
      rule.times === undefined ? undefined : `while its ${rule.times} time${rule.times === 1 ? '' : 's'} last`,
    ];
    const said = limits.filter((limit) => limit !== undefined).join(' ');
    parts.push(`${ruleName(index, rule.name)}${said ? `, ${said}` : ''}`);
    always = said === '';
    if (always) break;
  }
  if (!always) parts.push('the default answer');
  const text = parts.join('; else ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The row's mark beside the status, when something other than the default answer chose it: short text, and what it means. */
export function answerMark(answer: RecordedAnswer): { text: string; label: string } | undefined {
  if (answer.by === 'rule') return { text: `rule ${(answer.rule ?? 0) + 1}`, label: answeredBy(answer) };
  if (answer.by === 'forwarder') return { text: 'local app', label: answeredBy(answer) };
  return undefined;
}
