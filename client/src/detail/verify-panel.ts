// The detail's "Verify signature" panel. The secret stays in this tab: it is used only for the
// HMAC computed here with WebCrypto, kept in memory (or sessionStorage when the reader asks), and
// never put into a message, a URL or the log.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import {
  detectProvider,
  PROVIDERS,
  verifySignature,
  type Provider,
  type Verdict,
  type VerdictReason,
} from '../../../src/shared/signatures/index.js';
import { h } from '../dom.js';
import { bodyBytes } from '../format.js';

const LABELS: Record<Provider, string> = {
  github: 'GitHub',
  stripe: 'Stripe',
  slack: 'Slack',
  shopify: 'Shopify',
  'standard-webhooks': 'Standard Webhooks / Svix',
};

const TITLES: Record<VerdictReason, string> = {
  valid: 'Valid',
  mismatch: 'Mismatch',
  'missing-header': 'Missing header',
  'malformed-header': 'Malformed header',
  'bad-secret': 'Not a usable secret',
  'timestamp-out-of-tolerance': 'Timestamp out of tolerance',
  truncated: 'Cannot be checked',
};

/** Secrets typed in this tab, by sender: they outlive the detail (one secret, many requests), not the tab. */
const typedSecrets = new Map<Provider, string>();
const STORAGE_PREFIX = 'hookwatch.secret.';

/** sessionStorage can be switched off or full: then "remember" quietly means "in memory". */
function readStored(provider: Provider): string | undefined {
  try {
    return sessionStorage.getItem(STORAGE_PREFIX + provider) ?? undefined;
  } catch {
    return undefined;
  }
}

function writeStored(provider: Provider, secret: string | undefined): void {
  try {
    if (secret === undefined) sessionStorage.removeItem(STORAGE_PREFIX + provider);
    else sessionStorage.setItem(STORAGE_PREFIX + provider, secret);
  } catch {
    // Not available: the secret stays in memory only.
  }
}

let nextId = 0;

/** Characters of the expected signature shown until the reader asks for all of it. */
const EXPECTED_PREFIX = 12;

/**
 * The expected signature, cut to its start with a "Show full" toggle. The whole value is a valid
 * signature of this body (for GitHub and Shopify with no time limit): a screenshot or a pasted
 * bug report holding it lets anyone replay the body to the reader's app.
 */
function expectedCell(expected: string): HTMLElement {
  const short = `${expected.slice(0, EXPECTED_PREFIX)}…`;
  const value = h('span', {
    class: 'signature',
    text: expected.length > EXPECTED_PREFIX ? short : expected,
    attrs: { id: `verify-expected-${++nextId}` },
  });
  if (expected.length <= EXPECTED_PREFIX) return h('td', {}, value);
  const toggle: HTMLButtonElement = h('button', {
    class: 'link-button',
    text: 'Show full',
    attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': value.id },
    on: {
      click: () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        value.textContent = open ? expected : short;
        toggle.textContent = open ? 'Show less' : 'Show full';
      },
    },
  });
  return h('td', {}, value, ' ', toggle);
}

function renderVerdict(verdict: Verdict): HTMLElement[] {
  const parts: HTMLElement[] = [
    h('p', {
      class: `verdict-title ${verdict.ok ? 'verdict-ok' : 'verdict-bad'}`,
      text: `${TITLES[verdict.reason]} (${LABELS[verdict.provider]})`,
    }),
    h('p', { class: 'verdict-message', text: verdict.message }),
  ];
  const rows: HTMLElement[] = [];
  if (verdict.expected !== undefined)
    rows.push(h('tr', {}, h('th', { attrs: { scope: 'row' }, text: 'Expected' }), expectedCell(verdict.expected)));
  for (const received of verdict.received ?? [])
    rows.push(
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' }, text: 'Received' }),
        h('td', {}, h('span', { class: 'signature', text: received })),
      ),
    );
  if (rows.length > 0) {
    parts.push(
      h(
        'table',
        { class: 'pairs verdict-signatures' },
        h('caption', { class: 'offscreen', text: 'Signatures compared' }),
        h('tbody', {}, ...rows),
      ),
    );
  }
  return parts;
}

/**
 * The panel for one request. Where a signature header (or a sender's own header) is present: the
 * panel itself, titled. Elsewhere (forms, XML, binary bodies, …): a small "Verify signature…"
 * action that unfolds it.
 */
export function renderVerifyPanel(request: CapturedRequest): HTMLElement {
  if (detectProvider(request.headers))
    return fillPanel(request, h('section', { class: 'detail-section verify' }, h('h3', { text: 'Verify signature' })));
  const body = h('div', { class: 'verify-body', attrs: { id: `verify-body-${++nextId}`, hidden: '' } });
  let filled = false;
  const action: HTMLButtonElement = h('button', {
    class: 'link-button',
    text: 'Verify signature…',
    attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': body.id },
    on: {
      click: () => {
        const open = action.getAttribute('aria-expanded') !== 'true';
        // Built when first asked for: most requests never need it.
        if (open && !filled) {
          fillPanel(request, body);
          filled = true;
        }
        action.setAttribute('aria-expanded', String(open));
        body.hidden = !open;
      },
    },
  });
  return h('section', { class: 'detail-section verify verify-folded' }, action, body);
}

/** Sender (guessed from the headers), secret, remember, Verify; or why no check is possible. Appended to `section`. */
function fillPanel(request: CapturedRequest, section: HTMLElement): HTMLElement {
  // Kept endpoints store every signature header as [redacted] (they all hold "signature" or "hmac").
  if (request.redacted !== undefined) {
    const header = request.redacted.find((name) => /signature|hmac/i.test(name));
    section.append(
      h('p', {
        class: 'muted',
        text: header
          ? `Signatures cannot be checked on a kept endpoint: its signature header (${header}) was redacted before storage. Use a Live URL to check them.`
          : 'Signatures cannot be checked on a kept endpoint: it redacts signature headers before storage. Use a Live URL to check them.',
      }),
    );
    return section;
  }
  if (request.truncated) {
    section.append(
      h('p', {
        class: 'muted',
        text: 'The body was stored truncated, and a signature covers the whole body, so no check is possible. Raise MAX_BODY_BYTES to check requests this large.',
      }),
    );
    return section;
  }
  if (!globalThis.crypto?.subtle) {
    section.append(
      h('p', {
        class: 'muted',
        text: 'This browser computes signatures only on pages served over https:// (or from localhost). Open Hookwatch that way, or use hookwatch tail --verify.',
      }),
    );
    return section;
  }

  const id = `verify-${++nextId}`;
  const detected = detectProvider(request.headers);
  const sender = h(
    'select',
    { attrs: { id: `${id}-sender` } },
    detected ? null : h('option', { attrs: { value: '' }, text: 'Choose the sender' }),
    ...PROVIDERS.map((provider) => h('option', { attrs: { value: provider }, text: LABELS[provider] })),
  );
  sender.value = detected ?? '';
  const secret = h('input', {
    attrs: { id: `${id}-secret`, type: 'password', autocomplete: 'off', spellcheck: 'false' },
  });
  const remember = h('input', { attrs: { id: `${id}-remember`, type: 'checkbox' } });
  const verify = h('button', { class: 'primary', text: 'Verify', attrs: { type: 'submit' } });
  const output = h('div', { class: 'verdict', attrs: { 'aria-live': 'polite' } });
  const chosen = (): Provider | undefined => (sender.value === '' ? undefined : (sender.value as Provider));

  /** Shows what this tab holds for the chosen sender. */
  const fillSecret = () => {
    const provider = chosen();
    const stored = provider && readStored(provider);
    secret.value = provider ? (stored ?? typedSecrets.get(provider) ?? '') : '';
    remember.checked = stored !== undefined && stored !== '';
  };
  fillSecret();

  const form = h(
    'form',
    {
      class: 'verify-form',
      on: {
        submit: (event) => {
          event.preventDefault();
          const provider = chosen();
          if (!provider) {
            output.replaceChildren(
              h('p', { class: 'verdict-bad', text: 'Choose the sender first: no known signature header was found.' }),
            );
            output.scrollIntoView({ block: 'nearest' });
            return;
          }
          const text = secret.value;
          typedSecrets.set(provider, text);
          writeStored(provider, remember.checked ? text : undefined);
          verify.disabled = true;
          output.replaceChildren(h('p', { class: 'muted', text: 'Checking…' }));
          // The stored bytes, and "now" = when the request arrived, so a signed timestamp is judged as it was then.
          void verifySignature(
            provider,
            { headers: request.headers, body: bodyBytes(request), truncated: request.truncated },
            text,
            { nowMs: Date.parse(request.receivedAt) },
          )
            .then((verdict) => output.replaceChildren(...renderVerdict(verdict)))
            .catch(() =>
              output.replaceChildren(
                h('p', { class: 'verdict-bad', text: 'The browser could not compute the signature.' }),
              ),
            )
            .finally(() => {
              verify.disabled = false;
              // The verdict lands below the form, often below the visible area: bring it into view.
              output.scrollIntoView({ block: 'nearest' });
            });
        },
      },
    },
    h('span', { class: 'field' }, h('label', { attrs: { for: sender.id }, text: 'Sender' }), sender),
    h('span', { class: 'field' }, h('label', { attrs: { for: secret.id }, text: 'Secret' }), secret),
    h('span', { class: 'check' }, remember, h('label', { attrs: { for: remember.id }, text: 'Remember for this tab' })),
    verify,
  );
  sender.addEventListener('change', () => {
    fillSecret();
    output.replaceChildren();
  });
  remember.addEventListener('change', () => {
    const provider = chosen();
    // Unticking forgets at once; ticking stores what is typed now (and Verify stores it again).
    if (provider) writeStored(provider, remember.checked && secret.value !== '' ? secret.value : undefined);
  });

  const hint = detected
    ? `Sender guessed from the headers: ${LABELS[detected]}. The secret stays in this tab.`
    : 'No known signature header found: choose the sender. The secret stays in this tab.';
  section.append(h('p', { class: 'muted', text: hint }), form, output);
  return section;
}
