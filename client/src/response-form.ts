import type { ResponseConfig } from '../../src/shared/response-config.js';
import { DEFAULT_RESPONSE, MAX_RESPONSE_DELAY_MS, MAX_RESPONSE_HEADERS } from '../../src/shared/response-limits.js';
import { byId } from './dom.js';

/**
 * The "Answer senders with" form: shows the answer senders get now, and edits to it as edits
 * ("Not applied yet") until they are applied, so the form never reads as what senders get when
 * it is not. The server validates; its error comes back as a toast.
 */
export class ResponseForm {
  private readonly form = byId<HTMLFormElement>('response-form');
  private readonly current = byId('response-current');
  private readonly status = byId<HTMLInputElement>('response-status');
  private readonly delay = byId<HTMLInputElement>('response-delay');
  private readonly contentType = byId<HTMLSelectElement>('response-content-type');
  private readonly headers = byId<HTMLTextAreaElement>('response-headers');
  private readonly body = byId<HTMLTextAreaElement>('response-body');
  private readonly revert = byId<HTMLButtonElement>('response-revert');
  private readonly unsaved = byId('response-unsaved');
  private applied: ResponseConfig | undefined;

  constructor(apply: (response: ResponseConfig) => void) {
    // The server's limits, so the form says them as the server has them.
    this.delay.max = String(MAX_RESPONSE_DELAY_MS);
    byId('response-headers-max').textContent = String(MAX_RESPONSE_HEADERS);
    this.form.addEventListener('input', () => this.markEdits());
    this.form.addEventListener('change', () => this.markEdits());
    this.revert.addEventListener('click', () => this.applied && this.fill(this.applied));
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      apply(this.read());
    });
  }

  /** The endpoint's answer changed (or is first known): show it, dropping any edits. */
  fill(response: ResponseConfig): void {
    this.applied = response;
    this.status.value = String(response.status);
    this.delay.value = String(response.delayMs);
    this.contentType.value = response.contentType;
    this.headers.value = response.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
    this.body.value = response.body;
    this.current.textContent = `Senders get ${describe(response)}.`;
    this.markEdits();
  }

  /** The endpoint's answer is not known (joined over HTTP without a socket): the default to start from, said to be unknown. */
  unknown(): void {
    this.fill(DEFAULT_RESPONSE);
    this.applied = undefined;
    this.current.textContent = 'Without a live connection the answer senders get now is not known here: Apply sets it for every tab.';
    this.markEdits();
  }

  enable(enabled: boolean): void {
    for (const button of this.form.querySelectorAll('button')) button.disabled = !enabled;
  }

  private read(): ResponseConfig {
    const status = Number(this.status.value);
    return {
      status,
      body: status === 204 ? '' : this.body.value,
      contentType: this.contentType.value as ResponseConfig['contentType'],
      headers: parseHeaderLines(this.headers.value),
      delayMs: Number(this.delay.value || '0'),
    };
  }

  private markEdits(): void {
    this.body.disabled = this.status.value === '204';
    const edited = this.applied !== undefined && JSON.stringify(this.read()) !== JSON.stringify({ ...this.applied, body: this.applied.status === 204 ? '' : this.applied.body });
    this.unsaved.hidden = !edited;
    this.revert.hidden = !edited;
    this.form.classList.toggle('edited', edited);
  }
}

/** `429 with Retry-After, after 2 s` */
export function describe(response: ResponseConfig): string {
  const headers = response.headers.length > 0 ? ` with ${response.headers.map(([name]) => name).join(', ')}` : '';
  const delay = response.delayMs > 0 ? `, after ${response.delayMs >= 1000 ? `${response.delayMs / 1000} s` : `${response.delayMs} ms`}` : '';
  return `${response.status}${headers}${delay}`;
}

/** `Name: value` lines; blank lines skipped. A line without a colon becomes a name the server refuses, by name. */
export function parseHeaderLines(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const colon = line.indexOf(':');
      return colon === -1 ? [line, ''] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    });
}
