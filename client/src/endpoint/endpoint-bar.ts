// The page's header: the receiver URL and its lifetime, the connection's state, and the kind of
// endpoint New URL makes (remembered in this browser).
import { POLL_MS, type ConnectionState } from '../transport/connection.js';
import { byId, toast } from '../dom.js';
import type { EndpointKind, KeptOptions, PageEndpoint } from './endpoint.js';
import { expiryWarning, extendSpan, formatSpan, KEPT_SPANS, lifetimeText } from './lifetime.js';
import { saveKeepSecrets, saveKeptSpan, saveKind, savedKeepSecrets, savedKeptSpan, savedKind } from './settings.js';

/** What the header shows, read when it renders. */
export interface EndpointBarSource {
  state(): ConnectionState;
  endpoint(): PageEndpoint | undefined;
  /** When the next reconnect attempt is due (epoch ms). */
  nextAttemptAt(): number | undefined;
}

export interface EndpointBarEvents {
  copyUrl(): void;
  copyShareLink(): void;
  /** `ask`: confirm first (not from the expired banner). */
  newUrl(ask: boolean): void;
  retryNow(): void;
  /** Extend the kept endpoint to the chosen lifetime from now. */
  extend(ttlMs: number): void;
}

/** The connection's state, in words apart from the endpoint's kind ("Live" names a kind of URL). */
const STATE_LABELS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  live: 'Connected',
  reconnecting: 'Reconnecting…',
  polling: 'No live connection',
  expired: 'Expired',
};

export class EndpointBar {
  private readonly state = byId('state');
  private readonly retryIn = byId('retry-in');
  private readonly retryNow = byId<HTMLButtonElement>('retry-now');
  private readonly url = byId('receiver-url');
  private readonly lifetime = byId('lifetime');
  private readonly endpointKind = byId('endpoint-kind');
  private readonly lifetimeText = byId('lifetime-text');
  private readonly keptNameText = byId('kept-name');
  private readonly copyUrl = byId<HTMLButtonElement>('copy-url');
  private readonly copyShare = byId<HTMLButtonElement>('copy-share');
  private readonly expired = byId('expired');
  private readonly kindInputs = [...document.querySelectorAll<HTMLInputElement>('input[name="kind"]')];
  private readonly keptTtl = byId<HTMLSelectElement>('kept-ttl');
  private readonly nameField = byId<HTMLInputElement>('kept-name-field');
  private readonly nameError = byId('kept-name-field-error');
  private readonly keepSecrets = byId<HTMLInputElement>('keep-secrets');
  private readonly extendButton = byId<HTMLButtonElement>('extend');
  private readonly warning = byId('expiry-warning');
  private readonly keptOptionsBox = byId('kept-options');
  private readonly keptToggle = byId<HTMLButtonElement>('kept-toggle');
  /**
   * Whether the kept options are unfolded where they are a panel (below 1100 px, app.css; on a
   * wider screen they sit in the header's row and always show while Kept is chosen).
   */
  private keptOpen = false;
  /** The endpoint whose last hour was announced, so it is said once. */
  private warnedFor: string | undefined;

  constructor(
    private readonly source: EndpointBarSource,
    events: EndpointBarEvents,
  ) {
    const saved = savedKind();
    for (const input of this.kindInputs) {
      input.checked = input.value === saved;
      input.addEventListener('change', () => {
        saveKind(this.chosenKind());
        // Choosing Kept is asking for its options; a page that opens with Kept chosen keeps them folded.
        this.keptOpen = this.chosenKind() === 'kept';
        this.showKeptOptions();
      });
    }
    this.showKeptOptions();
    this.keptToggle.addEventListener('click', () => {
      this.keptOpen = !this.keptOpen;
      this.showKeptOptions();
    });
    byId('kept-done').addEventListener('click', () => this.foldKeptOptions());
    this.keptOptionsBox.addEventListener('keydown', (event) => {
      // Escape folds the panel; the row on a wide screen has nothing to fold (its toggle is not shown).
      if (event.key !== 'Escape' || !this.keptToggle.checkVisibility()) return;
      // Not also the page's Escape (main.ts: back to the list).
      event.stopPropagation();
      this.foldKeptOptions();
    });
    // The lifetime last chosen, when the page still offers it; else the server's default, 2 h.
    const span = savedKeptSpan();
    this.keptTtl.value = String(KEPT_SPANS.includes(span) ? span : KEPT_SPANS[0]);
    this.showKeptSpan(this.chosenSpan());
    this.keptTtl.addEventListener('change', () => {
      saveKeptSpan(this.chosenSpan());
      this.showKeptSpan(this.chosenSpan());
      this.tick();
    });
    this.keepSecrets.checked = savedKeepSecrets();
    this.keepSecrets.addEventListener('change', () => saveKeepSecrets(this.keepSecrets.checked));
    // An edited name may be right now: its error goes.
    this.nameField.addEventListener('input', () => this.showNameError(undefined));
    this.extendButton.addEventListener('click', () => {
      const span = this.extendSpan();
      if (span !== undefined) events.extend(span);
    });
    this.copyUrl.addEventListener('click', () => events.copyUrl());
    this.copyShare.addEventListener('click', () => events.copyShareLink());
    byId('new-url').addEventListener('click', () => events.newUrl(true));
    byId('expired-new-url').addEventListener('click', () => events.newUrl(false));
    this.retryNow.addEventListener('click', () => events.retryNow());
  }

  /** The next kept URL's options show only while Kept is the kind chosen: they mean nothing for a live one. */
  private showKeptOptions(): void {
    const kept = this.chosenKind() === 'kept';
    this.keptOptionsBox.hidden = this.keptToggle.hidden = !kept;
    this.keptOptionsBox.classList.toggle('folded', !this.keptOpen);
    this.keptToggle.setAttribute('aria-expanded', String(kept && this.keptOpen));
  }

  /** Done or Escape: the panel folds, and focus goes back to what opens it. */
  private foldKeptOptions(): void {
    this.keptOpen = false;
    this.showKeptOptions();
    this.keptToggle.focus();
  }

  /** The kind New URL makes. */
  chosenKind(): EndpointKind {
    return this.kindInputs.find((input) => input.checked)?.value === 'kept' ? 'kept' : 'live';
  }

  /** The lifetime chosen for kept endpoints (ms). */
  chosenSpan(): number {
    const span = Number(this.keptTtl.value);
    return KEPT_SPANS.includes(span) ? span : (KEPT_SPANS[0] as number);
  }

  /** What Extend makes the endpoint live from now: never less than it has left (lifetime.ts). */
  private extendSpan(): number | undefined {
    const expiresAt = this.source.endpoint()?.expiresAt;
    const left = expiresAt ? Date.parse(expiresAt) - Date.now() : 0;
    return extendSpan(this.chosenSpan(), Number.isNaN(left) ? 0 : left);
  }

  /** What the next kept endpoint is made with; `withName`: the name typed, if any (a new tab's first endpoint takes none). */
  keptOptions(withName: boolean): KeptOptions {
    const name = this.nameField.value.trim();
    return {
      ttlMs: this.chosenSpan(),
      ...(withName && name !== '' ? { name } : {}),
      ...(this.keepSecrets.checked ? { redact: false as const } : {}),
    };
  }

  /** The server's word on the name (none: the name is fine); the field is marked and focused. */
  showNameError(message: string | undefined): void {
    this.nameError.textContent = message ?? '';
    this.nameError.hidden = message === undefined;
    if (message === undefined) {
      this.nameField.removeAttribute('aria-invalid');
      this.nameField.removeAttribute('aria-describedby');
      return;
    }
    this.nameField.setAttribute('aria-invalid', 'true');
    this.nameField.setAttribute('aria-describedby', this.nameError.id);
    // A folded panel opens to show the field the server refused.
    this.keptOpen = true;
    this.showKeptOptions();
    this.nameField.focus();
  }

  /** The name was used: the next kept endpoint takes a random one unless another is typed. */
  nameUsed(): void {
    this.nameField.value = '';
    this.showNameError(undefined);
  }

  /** `kept for 2 h` */
  keptName(): string {
    return this.keptNameText.textContent?.toLowerCase() ?? 'kept';
  }

  /** While the connection starts: what it is doing. */
  showJoining(joining: boolean): void {
    this.url.classList.remove('url-gone', 'url-none');
    this.url.textContent = joining ? 'joining the endpoint…' : 'creating an endpoint…';
  }

  /** Welcomed: the URL. */
  showEndpoint(endpoint: PageEndpoint): void {
    this.url.textContent = endpoint.url;
  }

  showState(): void {
    const state = this.source.state();
    // The same text again is not news for a screen reader.
    if (this.state.textContent !== STATE_LABELS[state]) this.state.textContent = STATE_LABELS[state];
    this.state.dataset.state = state;
    this.expired.hidden = state !== 'expired';
    // Expired: the URL it had, struck through; none when the page never learnt it (an old link).
    const endpoint = this.source.endpoint();
    this.url.classList.toggle('url-gone', state === 'expired' && endpoint !== undefined);
    this.url.classList.toggle('url-none', state === 'expired' && endpoint === undefined);
    if (state === 'expired') this.url.textContent = endpoint ? endpoint.url : 'none: this link’s endpoint has expired';
    this.copyUrl.disabled = this.copyShare.disabled = !this.source.endpoint() || state === 'expired';
    this.tick();
  }

  /** What changes with time: the reconnect countdown, and a kept endpoint's. */
  tick(): void {
    this.showRetry();
    this.showLifetime();
  }

  /** "Kept for 2 h": the lifetime chosen for the next kept endpoint. */
  private showKeptSpan(ms: number): void {
    this.keptNameText.textContent = `Kept for ${formatSpan(ms)}`;
  }

  /** A kept endpoint's last hour: a warning beside its lifetime, announced once when it starts. */
  private showWarning(endpoint: PageEndpoint): void {
    const text = expiryWarning(endpoint, Date.now());
    this.warning.hidden = text === undefined;
    if (text === undefined) return;
    if (this.warning.textContent !== text) this.warning.textContent = text;
    // Said once through the toast's polite live region: each minute's new text is not news.
    if (this.warnedFor !== endpoint.id) {
      this.warnedFor = endpoint.id;
      toast(text);
    }
  }

  /** While reconnecting: when the next try is due, and a button to try now. While polling: how often, and a button to try live. */
  private showRetry(): void {
    const state = this.source.state();
    const at = this.source.nextAttemptAt();
    const reconnecting = state === 'reconnecting';
    const polling = state === 'polling';
    // While reconnecting the note and the button stay, also during an attempt, so nothing flickers.
    this.retryIn.hidden = this.retryNow.hidden = !(reconnecting || polling);
    this.retryNow.disabled = reconnecting && at === undefined;
    let note = '';
    if (reconnecting)
      note = at === undefined ? 'trying now…' : `next try in ${Math.max(1, Math.ceil((at - Date.now()) / 1000))} s`;
    else if (polling) note = `checking every ${POLL_MS / 1000} s`;
    if (this.retryIn.textContent !== note) this.retryIn.textContent = note;
    // Short: on a phone it shares the brand's line.
    this.retryNow.textContent = polling ? 'Retry' : 'Retry now';
  }

  /** Under the URL: the endpoint's kind, how long it lives (a countdown for a kept one) and what it keeps. */
  private showLifetime(): void {
    const endpoint = this.source.endpoint();
    this.lifetime.hidden = !endpoint || this.source.state() === 'expired';
    if (!endpoint || this.lifetime.hidden) return;
    // A kept endpoint can be made to live longer from now: the chosen lifetime, or the next one
    // longer than what is left, so Extend never shortens it. At the longest already: no button.
    const span = this.extendSpan();
    this.extendButton.hidden = endpoint.kind !== 'kept' || span === undefined;
    const extendText = span === undefined ? '' : `Extend to ${formatSpan(span)}`;
    if (this.extendButton.textContent !== extendText) this.extendButton.textContent = extendText;
    this.showWarning(endpoint);
    this.extendButton.disabled = !(this.source.state() === 'live' || this.source.state() === 'polling');
    const kind = endpoint.kind === 'kept' ? 'Kept' : 'Live';
    if (this.endpointKind.textContent !== kind) this.endpointKind.textContent = kind;
    this.endpointKind.dataset.kind = endpoint.kind;
    const text = lifetimeText(endpoint, Date.now());
    if (this.lifetimeText.textContent !== text) this.lifetimeText.textContent = text;
  }
}
