// The detail's account of a request's answer: what its sender got and what chose it, and which
// rule would answer it now. Kept up to date while the request is open: the local app's answer
// comes after the request (`answered`), and the rules change whenever someone applies new ones.
import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { answeredBy, wouldAnswer } from '../detail/answered-by.js';
import { h } from '../dom.js';

export class AnswerPanel {
  /** The "Answered" cell of the detail's facts: status and delay. */
  readonly fact = h('td', { class: 'value' });
  readonly section: HTMLElement;
  private readonly by = h('p');
  private readonly now = h('p');

  constructor(
    private request: CapturedRequest,
    private rules: readonly AnswerRule[],
  ) {
    this.section = h(
      'section',
      { class: 'detail-section answer-origin' },
      h('h3', { text: 'Answer' }),
      this.by,
      this.now,
    );
    this.render();
  }

  /** The request's record changed (its answer), or the rules did. */
  update(request: CapturedRequest, rules: readonly AnswerRule[]): void {
    this.request = request;
    this.rules = rules;
    this.render();
  }

  private render(): void {
    const { answer } = this.request;
    this.fact.textContent = `${answer.status} after ${answer.delayMs} ms`;
    const dropped = answer.droppedHeaders?.length
      ? ` Its headers not passed on to the sender: ${answer.droppedHeaders.join(', ')}.`
      : '';
    this.by.textContent = `${answeredBy(answer)}.${dropped}`;
    // Without rules, now or then, there is nothing to ask.
    const ask = this.rules.length > 0 || answer.by === 'rule';
    this.now.hidden = !ask;
    if (ask)
      this.now.replaceChildren(
        h('span', { class: 'question', text: 'Which rule would answer this request now?' }),
        ' ',
        wouldAnswer(this.rules, this.request),
      );
  }
}
