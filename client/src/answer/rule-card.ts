// One answer rule in the answer form: a line that says what it does (its number, name and
// summary, with buttons to move and delete it), unfolding into its fields.
import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import { RESPONSE_CONTENT_TYPES } from '../../../src/shared/response-limits.js';
import type { RuleField } from './answer-errors.js';
import { h } from '../dom.js';
import { fieldsFromRule, jsonBodyWarning, ruleFromFields, ruleSummary, type RuleFields } from './rule-fields.js';

export interface RuleCardEvents {
  move(card: RuleCard, step: -1 | 1): void;
  remove(card: RuleCard): void;
}

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** Where a field's refusal is said: beside the field, found by its control's id. */
const noteFor = (control: Control) =>
  h('p', { class: 'field-error', attrs: { id: `${control.id}-error`, hidden: '' } });

export class RuleCard {
  readonly element: HTMLLIElement;
  private readonly controls = {} as Record<RuleField, Control>;
  private readonly toggle: HTMLButtonElement;
  private readonly summary: HTMLElement;
  /** A JSON answer that will not parse, said beside its body. */
  private readonly bodyWarning: HTMLElement;
  private readonly fields: HTMLElement;
  private readonly note: HTMLElement;
  private readonly up: HTMLButtonElement;
  private readonly down: HTMLButtonElement;
  private readonly remove: HTMLButtonElement;

  /** `id`: unique in the page, kept while the rule moves, so its fields keep their labels. */
  constructor(
    readonly id: string,
    rule: AnswerRule,
    events: RuleCardEvents,
  ) {
    const values = fieldsFromRule(rule);
    const input = (field: RuleField, attrs: Record<string, string> = {}) =>
      this.control(
        field,
        h('input', { attrs: { type: 'text', spellcheck: 'false', autocomplete: 'off', ...attrs } }),
        values,
      );
    const lines = (field: RuleField, placeholder: string) =>
      this.control(field, h('textarea', { attrs: { rows: '2', spellcheck: 'false', placeholder } }), values);
    const number = (field: RuleField, placeholder: string, attrs: Record<string, string> = {}) =>
      input(field, { type: 'number', inputmode: 'numeric', placeholder, ...attrs });
    const type = this.control(
      'contentType',
      h('select', {}, ...RESPONSE_CONTENT_TYPES.map((name) => h('option', { text: name }))),
      values,
    );

    this.toggle = h('button', {
      class: 'rule-toggle',
      attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': `${id}-fields` },
      on: { click: () => this.setOpen(this.fields.hidden) },
    });
    this.up = h('button', {
      class: 'rule-tool',
      text: '↑',
      attrs: { type: 'button' },
      on: { click: () => events.move(this, -1) },
    });
    this.down = h('button', {
      class: 'rule-tool',
      text: '↓',
      attrs: { type: 'button' },
      on: { click: () => events.move(this, 1) },
    });
    this.remove = h('button', {
      class: 'rule-tool',
      text: 'Delete',
      attrs: { type: 'button' },
      on: { click: () => events.remove(this) },
    });
    this.summary = h('p', { class: 'rule-summary' });
    this.bodyWarning = h('p', { class: 'field-warning wide', attrs: { id: `${id}-body-warning`, hidden: '' } });
    this.note = h('p', { class: 'field-error', attrs: { id: `${id}-error`, hidden: '' } });
    this.fields = h(
      'div',
      { class: 'rule-fields', attrs: { id: `${id}-fields`, hidden: '' } },
      this.field('Name', input('name', { maxlength: '100', placeholder: 'e.g. fail three times first' }), 'wide'),
      h(
        'fieldset',
        { class: 'rule-group' },
        h('legend', { text: 'When (all that are given must hold)' }),
        this.field(
          'Method',
          input('method', { list: 'rule-methods', placeholder: 'any', autocapitalize: 'characters' }),
        ),
        this.field('Path', input('path', { placeholder: 'any, e.g. /github/**' })),
        this.field('Query (name=value lines)', lines('query', 'hub.mode=subscribe'), 'wide'),
        this.field('Headers (name=value lines)', lines('headers', 'X-GitHub-Event=push'), 'wide'),
        this.field('JSON body (path=value lines)', lines('json', 'type=url_verification'), 'wide'),
        h('p', {
          class: 'rule-hint',
          text: 'A value of * asks only that it be there. JSON paths are dotted: items.0.id.',
        }),
        this.field('Times', number('times', 'no limit', { min: '1', step: '1' })),
        this.field('Chance (%)', number('chance', '100', { min: '0', max: '100', step: 'any', inputmode: 'decimal' })),
        h('p', {
          class: 'rule-hint',
          text: 'Times: the rule answers only its first N matches. Chance: it answers a match that often; otherwise the next rule, or the default answer, does.',
        }),
      ),
      h(
        'fieldset',
        { class: 'rule-group' },
        h('legend', { text: 'Answer' }),
        this.field('Status', number('status', '200', { min: '200', max: '599', step: '1', list: 'response-statuses' })),
        this.field('Delay (ms)', number('delayMs', '0', { min: '0', step: '100' })),
        this.field('Type', type, 'wide'),
        this.field('Headers (Name: value lines)', lines('answerHeaders', 'Retry-After: 5'), 'wide'),
        this.field('Body', lines('body', '{{json.challenge}}'), 'wide'),
        this.bodyWarning,
        h('p', {
          class: 'rule-hint',
          text: 'In the body and header values: {{json.<path>}}, {{query.<name>}}, {{header.<name>}}, {{method}}, {{path}}, {{seq}}; {{json:<path>}} inserts a value as JSON, outside quotes.',
        }),
      ),
    );
    this.element = h(
      'li',
      { class: 'rule', attrs: { id } },
      h(
        'div',
        { class: 'rule-head' },
        h('h4', { class: 'rule-title' }, this.toggle),
        h('span', { class: 'rule-tools' }, this.up, this.down, this.remove),
      ),
      this.summary,
      this.note,
      this.fields,
    );
    // What the line says follows the fields as they are typed.
    this.fields.addEventListener('input', () => this.refresh());
    this.fields.addEventListener('change', () => this.refresh());
  }

  /** The rule's place in the list (from 0, of `count`): its title and the buttons' names say it. */
  number(index: number, count: number): void {
    this.element.dataset.index = String(index);
    const which = `rule ${index + 1}`;
    this.up.setAttribute('aria-label', `Move ${which} up`);
    this.down.setAttribute('aria-label', `Move ${which} down`);
    this.remove.setAttribute('aria-label', `Delete ${which}`);
    this.up.disabled = index === 0;
    this.down.disabled = index === count - 1;
    this.refresh();
  }

  get values(): RuleFields {
    return Object.fromEntries(
      Object.entries(this.controls).map(([field, control]) => [field, control.value]),
    ) as RuleFields;
  }

  read(): AnswerRule {
    return ruleFromFields(this.values);
  }

  get open(): boolean {
    return !this.fields.hidden;
  }

  setOpen(open: boolean): void {
    this.fields.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
  }

  /** After a move: focus stays on the button that moved it, or, at an end, the other one. */
  focusMove(step: -1 | 1): void {
    const button = step === -1 ? this.up : this.down;
    (button.disabled ? (step === -1 ? this.down : this.up) : button).focus();
  }

  focus(): void {
    this.toggle.focus();
  }

  /**
   * Marks the fields the errors name (none: unmarks all); what names no field is said under the
   * rule's line. Unfolds when there is any. The first marked control, to focus.
   */
  showErrors(errors: ReadonlyArray<{ field: RuleField | undefined; message: string }>): Control | undefined {
    let first: Control | undefined;
    for (const [field, control] of Object.entries(this.controls) as Array<[RuleField, Control]>) {
      const messages = errors.filter((error) => error.field === field).map((error) => error.message);
      const note = this.element.querySelector(`#${control.id}-error`) as HTMLElement;
      note.textContent = messages.join('\n');
      note.hidden = messages.length === 0;
      if (messages.length > 0) {
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', note.id);
        first ??= control;
      } else {
        control.removeAttribute('aria-invalid');
        control.removeAttribute('aria-describedby');
      }
    }
    const general = errors.filter((error) => error.field === undefined).map((error) => error.message);
    this.note.textContent = general.join('\n');
    this.note.hidden = general.length === 0;
    if (errors.length > 0) this.setOpen(true);
    return first;
  }

  private refresh(): void {
    const { name } = this.values;
    this.toggle.textContent = `${Number(this.element.dataset.index ?? 0) + 1}. ${name.trim() || 'Rule without a name'}`;
    this.summary.textContent = ruleSummary(this.read());
    const { body, contentType } = this.values;
    const warning = jsonBodyWarning(body, contentType);
    this.bodyWarning.hidden = warning === undefined;
    if (this.bodyWarning.textContent !== (warning ?? '')) this.bodyWarning.textContent = warning ?? '';
  }

  private control<T extends Control>(field: RuleField, control: T, values: RuleFields): T {
    control.id = `${this.id}-${field}`;
    control.value = values[field];
    this.controls[field] = control;
    return control;
  }

  private field(label: string, control: Control, size?: 'wide'): HTMLElement {
    return h(
      'div',
      { class: `rule-field${size ? ` ${size}` : ''}` },
      h('label', { attrs: { for: control.id }, text: label }),
      control,
      noteFor(control),
    );
  }
}
