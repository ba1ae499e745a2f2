// The answer form's rules: an ordered list of rule cards (rule-card.ts) that can be added (empty
// or from a preset), moved, edited and deleted, folded under one line so the request list keeps
// its room. The form reads them with the default answer and applies them together.
import { ANSWER_PRESETS } from '../../../src/shared/answer-presets.js';
import { MAX_RULES, type AnswerRule } from '../../../src/shared/answer-rules.js';
import { ruleFormErrors, type FieldError } from './answer-errors.js';
import { byId, h } from '../dom.js';
import { RuleCard } from './rule-card.js';

type RuleError = Extract<FieldError, { rule: number }>;

export class RulesEditor {
  private readonly toggle = byId<HTMLButtonElement>('rules-toggle');
  private readonly body = byId('rules-body');
  private readonly list = byId<HTMLOListElement>('rules-list');
  private readonly addEmpty = byId<HTMLButtonElement>('rule-add');
  private readonly preset = byId<HTMLSelectElement>('rule-preset');
  private readonly parameterField = byId('rule-parameter-field');
  private readonly parameterLabel = byId('rule-parameter-label');
  private readonly parameter = byId<HTMLInputElement>('rule-parameter');
  private readonly addPreset = byId<HTMLButtonElement>('rule-preset-add');
  private readonly full = byId('rules-full');
  private cards: RuleCard[] = [];
  /** Cards get ids of their own, not their place, so a moved rule's labels still point at its fields. */
  private nextId = 0;

  /** `changed`: rules were added, moved or deleted (typing in a field is an input event the form hears itself). */
  constructor(private readonly changed: () => void) {
    this.preset.append(
      ...ANSWER_PRESETS.map((preset) => h('option', { text: preset.label, attrs: { value: preset.id } })),
    );
    this.full.textContent = `At most ${MAX_RULES} rules: delete one to add another.`;
    this.toggle.addEventListener('click', () => this.setOpen(this.body.hidden));
    this.preset.addEventListener('change', () => this.showParameter());
    this.addEmpty.addEventListener('click', () => this.add({ answer: {} }, true));
    this.addPreset.addEventListener('click', () => {
      const preset = ANSWER_PRESETS.find((candidate) => candidate.id === this.preset.value);
      if (!preset) return;
      this.add(preset.rule(preset.parameter && this.parameterValue(preset.parameter)), false);
      this.preset.value = '';
      this.showParameter();
    });
    this.showParameter();
  }

  /** The rules senders get now (dropping edits), folded. */
  fill(rules: readonly AnswerRule[]): void {
    this.cards = rules.map((rule) => this.card(rule));
    this.list.replaceChildren(...this.cards.map((card) => card.element));
    this.renumber();
  }

  read(): AnswerRule[] {
    return this.cards.map((card) => card.read());
  }

  get count(): number {
    return this.cards.length;
  }

  /** What can be told before asking the server: numbers that are not numbers, lines without `=`, unknown placeholders. */
  localErrors(): RuleError[] {
    return this.cards.flatMap((card, rule) => ruleFormErrors(card.values).map((error) => ({ rule, ...error })));
  }

  /**
   * Marks each rule's errors on its fields (none: unmarks all). The first marked control, to
   * focus, and the errors for rules the list no longer has.
   */
  showErrors(errors: readonly RuleError[]): { first: HTMLElement | undefined; unplaced: RuleError[] } {
    let first: HTMLElement | undefined;
    this.cards.forEach((card, rule) => {
      const own = errors.filter((error) => error.rule === rule);
      const control = card.showErrors(own);
      first ??= control ?? (own.length > 0 ? card.element : undefined);
    });
    if (first) this.setOpen(true);
    return { first, unplaced: errors.filter((error) => error.rule >= this.cards.length) };
  }

  setOpen(open: boolean): void {
    this.body.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
  }

  /** Adds a rule at the end: `open`, for an empty one to fill in; folded, for a preset, whose line says what it does. */
  private add(rule: AnswerRule, open: boolean): void {
    if (this.cards.length >= MAX_RULES) return;
    const card = this.card(rule);
    this.cards.push(card);
    this.list.append(card.element);
    card.setOpen(open);
    this.renumber();
    this.changed();
    card.focus();
  }

  private card(rule: AnswerRule): RuleCard {
    return new RuleCard(`rule-${this.nextId++}`, rule, {
      move: (card, step) => {
        const from = this.cards.indexOf(card);
        const to = from + step;
        if (to < 0 || to >= this.cards.length) return;
        this.cards.splice(from, 1);
        this.cards.splice(to, 0, card);
        if (step === -1) card.element.previousElementSibling?.before(card.element);
        else card.element.nextElementSibling?.after(card.element);
        this.renumber();
        this.changed();
        card.focusMove(step);
      },
      remove: (card) => {
        const at = this.cards.indexOf(card);
        this.cards.splice(at, 1);
        card.element.remove();
        this.renumber();
        this.changed();
        // Focus goes to the rule that took its place, or the one before, or adding a new one.
        const next = this.cards[at] ?? this.cards[at - 1];
        if (next) next.focus();
        else this.addEmpty.focus();
      },
    });
  }

  private renumber(): void {
    this.cards.forEach((card, index) => card.number(index, this.cards.length));
    const count = this.cards.length;
    this.toggle.textContent = `Rules (${count === 0 ? 'none' : count})`;
    const full = count >= MAX_RULES;
    this.full.hidden = !full;
    this.addEmpty.disabled = full;
    this.addPreset.disabled = full || this.preset.value === '';
  }

  /** The number typed for a preset, within its bounds (its default when it is not a number). */
  private parameterValue({ min, max, default: fallback }: { min: number; max: number; default: number }): number {
    const typed = Math.round(Number(this.parameter.value));
    return this.parameter.value.trim() === '' || !Number.isFinite(typed)
      ? fallback
      : Math.min(max, Math.max(min, typed));
  }

  /** A preset that takes a number (failures, a percentage, a delay) asks for it beside the menu. */
  private showParameter(): void {
    const parameter = ANSWER_PRESETS.find((preset) => preset.id === this.preset.value)?.parameter;
    this.parameterField.hidden = !parameter;
    if (parameter) {
      this.parameterLabel.textContent = parameter.label;
      this.parameter.min = String(parameter.min);
      this.parameter.max = String(parameter.max);
      this.parameter.value = String(parameter.default);
    }
    this.addPreset.disabled = this.cards.length >= MAX_RULES || this.preset.value === '';
  }
}
