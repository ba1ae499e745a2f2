import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import type { ResponseConfig } from '../../../src/shared/schemas/response-config.js';
import { DEFAULT_RESPONSE, MAX_RESPONSE_DELAY_MS, MAX_RESPONSE_HEADERS } from '../../../src/shared/response-limits.js';
import { answerErrors, formErrors, type AnswerField, type FieldError } from './answer-errors.js';
import { byId } from '../dom.js';
import { headerLines, parseHeaderLines } from './field-lines.js';
import { formatDelay } from '../format.js';
import { countsResetNote, jsonBodyWarning, normalRule } from './rule-fields.js';
import { RulesEditor } from './rules-editor.js';

/**
 * The answer senders get: one line ("Answer: 200 application/json, no delay · 2 rules") that
 * unfolds into the form that changes it: the default answer and the rules (rules-editor.ts). The
 * form shows the answer senders get now, and edits to it as edits ("Not applied yet") until they
 * are applied, so it never reads as what senders get when it is not. The server validates; what it
 * refuses is marked on the field (a rule's on that rule's field), in words, until edited.
 */
export class ResponseForm {
  private readonly form = byId<HTMLFormElement>('response-form');
  private readonly toggle = byId<HTMLButtonElement>('response-toggle');
  private readonly fields = byId('response-fields');
  private readonly current = byId('response-current');
  private readonly status = byId<HTMLInputElement>('response-status');
  private readonly delay = byId<HTMLInputElement>('response-delay');
  private readonly contentType = byId<HTMLSelectElement>('response-content-type');
  private readonly headers = byId<HTMLTextAreaElement>('response-headers');
  private readonly body = byId<HTMLTextAreaElement>('response-body');
  private readonly revert = byId<HTMLButtonElement>('response-revert');
  private readonly unsaved = byId('response-unsaved');
  private readonly resets = byId('response-resets');
  private readonly bodyWarning = byId('response-body-warning');
  private readonly responderNote = byId('responder-note');
  private readonly rules = new RulesEditor(() => this.markEdits());
  /** Each field's control, by the name the server's messages use. */
  private readonly controls: Record<AnswerField, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>;
  private applied: ResponseConfig | undefined;
  /** This tab applied an answer and waits for it to come back (or be refused). */
  private pending = false;
  /** Joined without a socket: the answer senders get now is not known here. */
  private answerUnknown = false;

  constructor(private readonly apply: (response: ResponseConfig) => boolean) {
    this.controls = {
      status: this.status,
      delayMs: this.delay,
      contentType: this.contentType,
      headers: this.headers,
      body: this.body,
    };
    // The server's limits, so the form says them as the server has them.
    this.delay.max = String(MAX_RESPONSE_DELAY_MS);
    byId('response-headers-max').textContent = String(MAX_RESPONSE_HEADERS);
    this.toggle.addEventListener('click', () => this.setOpen(!this.isOpen));
    this.form.addEventListener('input', (event) => this.edited(event.target));
    this.form.addEventListener('change', (event) => this.edited(event.target));
    this.revert.addEventListener('click', () => this.applied && this.fill(this.applied, false));
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.reset();
  }

  /** A new endpoint, not welcomed yet: the default answer, folded. */
  reset(): void {
    this.fill(DEFAULT_RESPONSE, true);
    this.applied = undefined;
    this.form.hidden = false;
    this.markEdits();
  }

  /**
   * The endpoint's answer changed (or is first known): show it, dropping any edits. `fold`: fold the
   * form to its one line (when first known, and after this tab applied it).
   */
  fill(response: ResponseConfig, fold = this.pending): void {
    this.applied = response;
    this.pending = this.answerUnknown = false;
    this.status.value = String(response.status);
    this.delay.value = String(response.delayMs);
    this.contentType.value = response.contentType;
    this.headers.value = headerLines(response.headers);
    this.body.value = response.body;
    this.rules.fill(response.rules ?? []);
    this.current.textContent = `Senders get ${describe(response)}.`;
    this.showErrors([]);
    this.markEdits();
    if (fold) {
      this.rules.setOpen(false);
      this.setOpen(false);
    }
  }

  /** The rules senders' requests are matched against now (none while the answer is not known). */
  get appliedRules(): readonly AnswerRule[] {
    return this.applied?.rules ?? [];
  }

  /** A `hookwatch forward --respond` answers senders with the local app's answer (or no longer does). */
  showResponder(active: boolean): void {
    this.responderNote.hidden = !active;
  }

  /** The endpoint's answer is not known (joined over HTTP without a socket): the default to start from, said to be unknown. */
  unknown(): void {
    this.fill(DEFAULT_RESPONSE, true);
    this.applied = undefined;
    this.answerUnknown = true;
    this.current.textContent =
      'Without a live connection the answer senders get now is not known here: Apply sets it for every tab.';
    this.markEdits();
  }

  enable(enabled: boolean): void {
    // Only applying needs the server: rules can be edited while it is away.
    for (const button of this.form.querySelectorAll<HTMLButtonElement>('.response-actions button'))
      button.disabled = !enabled;
  }

  /** An expired endpoint has no answer to set. */
  hide(hidden: boolean): void {
    this.form.hidden = hidden;
  }

  /** The server refused the answer this tab applied (INVALID_RESPONSE_CONFIG): each issue on its field. The issues that name no place in the form. */
  refused(serverMessage: string): FieldError[] {
    this.pending = false;
    return this.showErrors(answerErrors(serverMessage, Number(this.status.value), this.rules.read()));
  }

  private get isOpen(): boolean {
    return !this.fields.hidden;
  }

  private setOpen(open: boolean): void {
    if (open === this.isOpen) return;
    // Folding away the focused field (Apply, say) would drop focus to the page: keep it on the toggle.
    const hadFocus = this.fields.contains(document.activeElement);
    this.fields.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
    if (!open && hadFocus) this.toggle.focus();
  }

  private submit(): void {
    const errors = [
      ...formErrors(this.status.value, this.delay.value, this.headers.value),
      ...this.rules.localErrors(),
    ];
    this.showErrors(errors);
    if (errors.length > 0) return;
    this.pending = this.apply(this.read());
  }

  /** Marks each field with its errors (none: unmarks all), and brings the first into view. The errors with no place in the form. */
  private showErrors(errors: FieldError[]): FieldError[] {
    for (const [field, control] of Object.entries(this.controls) as Array<[AnswerField, HTMLElement]>) {
      const messages = errors
        .filter((error) => error.rule === undefined && error.field === field)
        .map((error) => error.message);
      const note = byId(`${control.id}-error`);
      note.textContent = messages.join('\n');
      note.hidden = messages.length === 0;
      if (messages.length > 0) {
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', note.id);
      } else {
        control.removeAttribute('aria-invalid');
        control.removeAttribute('aria-describedby');
      }
    }
    const ruleErrors = errors.filter((error) => error.rule !== undefined);
    const rules = this.rules.showErrors(ruleErrors);
    const first = errors.find((error) => error.rule === undefined && error.field !== undefined);
    const focus = first?.field && first.rule === undefined ? this.controls[first.field] : rules.first;
    if (focus) {
      this.setOpen(true);
      focus.focus();
    }
    return [...errors.filter((error) => error.rule === undefined && error.field === undefined), ...rules.unplaced];
  }

  /** A field changed: its error goes (it may be right now), and the edits show. */
  private edited(target: EventTarget | null): void {
    if (target instanceof HTMLElement && target.getAttribute('aria-invalid') === 'true') {
      target.removeAttribute('aria-invalid');
      target.removeAttribute('aria-describedby');
      const note = document.getElementById(`${target.id}-error`);
      if (note) note.hidden = true;
    }
    this.markEdits();
  }

  private read(): ResponseConfig {
    const status = Number(this.status.value);
    const rules = this.rules.read();
    return {
      status,
      body: status === 204 ? '' : this.body.value,
      contentType: this.contentType.value as ResponseConfig['contentType'],
      headers: parseHeaderLines(this.headers.value),
      delayMs: Number(this.delay.value || '0'),
      // Without rules, none is sent: a server that has no rules yet takes the answer as before.
      ...(rules.length > 0 ? { rules } : {}),
    };
  }

  private markEdits(): void {
    this.body.disabled = this.status.value === '204';
    const edited = this.applied !== undefined && JSON.stringify(this.read()) !== JSON.stringify(asRead(this.applied));
    this.unsaved.hidden = !edited;
    const warning =
      this.status.value === '204' ? undefined : jsonBodyWarning(this.body.value, this.contentType.value, false);
    this.bodyWarning.hidden = warning === undefined;
    if (this.bodyWarning.textContent !== (warning ?? '')) this.bodyWarning.textContent = warning ?? '';
    // Any change applied resets every rule's count on the server: said before Apply, not found out after.
    const resets = edited ? countsResetNote(this.applied?.rules ?? []) : undefined;
    this.resets.hidden = resets === undefined;
    if (this.resets.textContent !== (resets ?? '')) this.resets.textContent = resets ?? '';
    this.revert.hidden = !edited;
    this.form.classList.toggle('edited', edited);
    const line = this.answerUnknown ? 'not known without a live connection' : summary(this.applied ?? DEFAULT_RESPONSE);
    this.toggle.textContent = `Answer: ${line}${edited ? ' (edits not applied)' : ''}`;
  }
}

/** The answer as the form would read it back after showing it: so an answer compares equal to the form it filled. */
function asRead(response: ResponseConfig): ResponseConfig {
  const { rules, ...answer } = response;
  return {
    ...answer,
    body: response.status === 204 ? '' : response.body,
    ...(rules?.length ? { rules: rules.map(normalRule) } : {}),
  };
}

const rulesCount = (response: ResponseConfig): number => response.rules?.length ?? 0;

/** `429 with Retry-After, after 2 s`, `200, unless one of its 2 rules answers` */
export function describe(response: ResponseConfig): string {
  const headers = response.headers.length > 0 ? ` with ${response.headers.map(([name]) => name).join(', ')}` : '';
  const delay = response.delayMs > 0 ? `, after ${formatDelay(response.delayMs)}` : '';
  const count = rulesCount(response);
  const rules = count > 0 ? `, unless ${count === 1 ? 'its rule' : `one of its ${count} rules`} answers` : '';
  return `${response.status}${headers}${delay}${rules}`;
}

/** The folded form's line: `200 application/json, no delay`, `429 text/plain, with Retry-After, after 2 s · 2 rules`. */
export function summary(response: ResponseConfig): string {
  const headers = response.headers.length > 0 ? `, with ${response.headers.map(([name]) => name).join(', ')}` : '';
  const delay = response.delayMs > 0 ? `after ${formatDelay(response.delayMs)}` : 'no delay';
  const count = rulesCount(response);
  const rules = count > 0 ? ` · ${count} rule${count === 1 ? '' : 's'}` : '';
  return `${response.status} ${response.contentType}${headers}, ${delay}${rules}`;
}
