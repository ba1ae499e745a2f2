import type { ResponseConfig } from '../../src/response-config.js';
import { byId } from './dom.js';

/** The "Answer senders with" form: shows the endpoint's answer and asks the server to change it. */
export class ResponseForm {
  private readonly form = byId<HTMLFormElement>('response-form');
  private readonly status = byId<HTMLSelectElement>('response-status');
  private readonly contentType = byId<HTMLSelectElement>('response-content-type');
  private readonly body = byId<HTMLTextAreaElement>('response-body');

  constructor(apply: (response: ResponseConfig) => void) {
    this.status.addEventListener('change', () => (this.body.disabled = this.status.value === '204'));
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const status = Number(this.status.value);
      apply({ status, body: status === 204 ? '' : this.body.value, contentType: this.contentType.value } as ResponseConfig);
    });
  }

  fill(response: ResponseConfig): void {
    this.status.value = String(response.status);
    this.contentType.value = response.contentType;
    this.body.value = response.body;
    this.body.disabled = response.status === 204;
  }

  enable(enabled: boolean): void {
    for (const button of this.form.querySelectorAll('button')) button.disabled = !enabled;
  }
}
