// The detail's replay panel, loaded with import() the first time Replay or Edit and replay is
// used. The edit form, the re-signing (the secret stays in this tab, decision 13: the signature is
// computed here with WebCrypto and only the signed headers leave it) and the result beside the
// original sender's answer.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { MAX_WS_MESSAGE_BYTES, type EditedRequest, type ReplayResultMessage } from '../../../src/shared/protocol.js';
import {
  detectProvider,
  PROVIDERS,
  signRequest,
  type HeaderChange,
  type Provider,
} from '../../../src/shared/signatures/index.js';
import { replayUrl, toCurl } from '../../../src/shared/to-curl.js';
import { copy } from '../log/actions.js';
import { answeredBy } from './answered-by.js';
import { h } from '../dom.js';
import { bodyBytes } from '../format.js';
import type { Replays } from '../transport/replays.js';

const LABELS: Record<Provider, string> = {
  github: 'GitHub',
  stripe: 'Stripe',
  slack: 'Slack',
  shopify: 'Shopify',
  'standard-webhooks': 'Standard Webhooks / Svix',
};

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const PATH = /^\/[\x21-\x7e]*$/;

let nextId = 0;

/** What the panel needs from the page besides the request. */
export interface ReplayContext {
  replays: Replays;
  /** The receiver URL, for the cURL offered when no forwarder is connected. */
  receiverUrl: string;
}

/** Builds the panel into `container`; `edit`: with the edit form open. `Replay` sends at once. */
export function mountReplayPanel(
  container: HTMLElement,
  request: CapturedRequest,
  context: ReplayContext,
  edit: boolean,
): void {
  const id = `replay-${++nextId}`;
  const queryAt = request.url.indexOf('?');
  const originalPath = `${request.subPath === '' ? '/' : request.subPath}${queryAt === -1 ? '' : request.url.slice(queryAt)}`;
  const binary = request.bodyEncoding === 'base64';

  const method = h('input', {
    attrs: { id: `${id}-method`, value: request.method, autocomplete: 'off', spellcheck: 'false' },
  });
  const path = h('input', {
    attrs: { id: `${id}-path`, value: originalPath, autocomplete: 'off', spellcheck: 'false' },
  });
  const headers = h('textarea', { attrs: { id: `${id}-headers`, rows: '6', spellcheck: 'false' } });
  headers.value = request.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  const body = h('textarea', { attrs: { id: `${id}-body`, rows: '8', spellcheck: 'false' } });
  body.value = binary ? '' : request.body;
  if (binary) body.disabled = true;
  const editForm = h(
    'div',
    { class: 'replay-edit', attrs: edit ? {} : { hidden: '' } },
    h('span', { class: 'field' }, h('label', { attrs: { for: method.id }, text: 'Method' }), method),
    h('span', { class: 'field' }, h('label', { attrs: { for: path.id }, text: 'Path and query' }), path),
    h(
      'span',
      { class: 'field field-wide' },
      h('label', { attrs: { for: headers.id }, text: 'Headers (one "Name: value" a line)' }),
      headers,
    ),
    h(
      'span',
      { class: 'field field-wide' },
      h('label', { attrs: { for: body.id }, text: binary ? 'Body (binary: sent as stored)' : 'Body' }),
      body,
    ),
  );

  const resign = h('input', { attrs: { id: `${id}-resign`, type: 'checkbox' } });
  const detected = detectProvider(request.headers);
  const sender = h(
    'select',
    { attrs: { id: `${id}-sender` } },
    ...PROVIDERS.map((provider) => h('option', { attrs: { value: provider }, text: LABELS[provider] })),
  );
  sender.value = detected ?? 'github';
  const secret = h('input', {
    attrs: { id: `${id}-secret`, type: 'password', autocomplete: 'off', spellcheck: 'false' },
  });
  const signFields = h(
    'div',
    { class: 'replay-sign-fields', attrs: { hidden: '' } },
    h('span', { class: 'field' }, h('label', { attrs: { for: sender.id }, text: 'Sender' }), sender),
    h(
      'span',
      { class: 'field' },
      h('label', { attrs: { for: secret.id }, text: 'Signing secret (stays in this tab)' }),
      secret,
    ),
  );
  resign.addEventListener('change', () => (signFields.hidden = !resign.checked));

  const sendButton = h('button', {
    class: 'primary',
    text: edit ? 'Send edited replay' : 'Replay again',
    attrs: { type: 'submit' },
  });
  const output = h('div', { class: 'replay-output', attrs: { 'aria-live': 'polite' } });

  const form = h(
    'form',
    { class: 'replay-form', attrs: { 'aria-label': `Replay request #${request.seq}` } },
    editForm,
    h(
      'span',
      { class: 'check' },
      resign,
      h('label', { attrs: { for: resign.id }, text: 'Sign again with a fresh timestamp' }),
    ),
    signFields,
    sendButton,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void send();
  });
  container.replaceChildren(form, output);

  const show = (...nodes: Node[]) => {
    output.replaceChildren(...nodes);
    output.scrollIntoView({ block: 'nearest' });
  };

  async function send(): Promise<void> {
    const built = await buildEdited();
    if (typeof built === 'string') return show(h('p', { class: 'verdict-bad', text: built }));
    const { edited, changed } = built;
    sendButton.disabled = true;
    const changes = changed.length > 0 ? changedList(changed) : null;
    const ordered = context.replays.order(request.seq, edited, (event) => {
      if (event.type === 'replay-started')
        return show(
          h('p', { class: 'muted', text: `Sending through hookwatch forward to ${event.target}…` }),
          ...(changes ? [changes] : []),
        );
      sendButton.disabled = false;
      if (event.type === 'refused') return show(h('p', { class: 'verdict-bad', text: event.message }));
      show(...renderResult(event, request, context, edited), ...(changes ? [changes] : []));
    });
    if (ordered !== 'sent') {
      sendButton.disabled = false;
      const why =
        ordered === 'offline'
          ? 'Replay needs the live connection, and the page is not connected over a socket now.'
          : `This copy is too large to send from the page (a socket message holds at most ${Math.floor(MAX_WS_MESSAGE_BYTES / 1024)} KiB). Use hookwatch replay <share link> ${request.seq} --edit instead.`;
      return show(h('p', { class: 'verdict-bad', text: why }));
    }
    show(h('p', { class: 'muted', text: 'Asking the connected hookwatch forward…' }));
  }

  /** The copy to send: undefined fields mean "as stored". A string says what is wrong. */
  async function buildEdited(): Promise<{ edited: EditedRequest | undefined; changed: HeaderChange[] } | string> {
    const editing = !editForm.hidden;
    if (!editing && !resign.checked) return { edited: undefined, changed: [] };
    let list: Array<[string, string]> = request.headers;
    if (editing) {
      if (!TOKEN.test(method.value) || method.value.length > 32) return 'The method is not a valid HTTP method.';
      if (!PATH.test(path.value)) return 'The path should start with / and hold no spaces.';
      const parsed = parseHeaderLines(headers.value);
      if (typeof parsed === 'string') return parsed;
      list = parsed;
    }
    const bytes = editing && !binary ? new TextEncoder().encode(body.value) : bodyBytes(request);
    let changed: HeaderChange[] = [];
    if (resign.checked) {
      if (!globalThis.crypto?.subtle)
        return 'This browser signs only on pages served over https:// (or from localhost).';
      const signed = await signRequest(sender.value as Provider, { headers: list, body: bytes }, secret.value);
      if (!signed.ok) return signed.message;
      list = signed.headers;
      changed = signed.changed;
    }
    const edited: EditedRequest = {
      method: editing ? method.value : request.method,
      path: editing ? path.value : originalPath,
      headers: list,
      body: editing && !binary ? body.value : request.body,
      bodyEncoding: editing && !binary ? 'utf8' : request.bodyEncoding,
    };
    return { edited, changed };
  }

  if (!edit) void send();
}

/** Headers from the textarea, or which line is wrong. Blank lines are skipped. */
function parseHeaderLines(text: string): Array<[string, string]> | string {
  const headers: Array<[string, string]> = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] as string).replace(/\r$/, '');
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon);
    if (!TOKEN.test(name)) return `Headers, line ${index + 1}: should be "Name: value", with no spaces in the name.`;
    const value = line.slice(colon + 1).trim();
    if (BAD_VALUE.test(value)) return `Headers, line ${index + 1}: the value has a control character.`;
    headers.push([name, value]);
  }
  if (headers.length > 100) return 'At most 100 headers.';
  return headers;
}

function changedList(changed: HeaderChange[]): HTMLElement {
  return h(
    'div',
    { class: 'replay-changes' },
    h('h4', { text: 'Headers changed by signing again' }),
    h(
      'ul',
      {},
      ...changed.map((change) =>
        h('li', {}, h('code', { text: change.name }), change.before === undefined ? ' added' : ' changed'),
      ),
    ),
  );
}

function renderResult(
  result: ReplayResultMessage,
  request: CapturedRequest,
  context: ReplayContext,
  edited: EditedRequest | undefined,
): Node[] {
  const original = `${request.answer.status} · ${answeredBy(request.answer)}`;
  if (result.status === undefined) {
    const error = result.error ?? 'Not delivered.';
    const nodes: Node[] = [h('p', { class: 'verdict-bad', text: error })];
    if (/No hookwatch forward is connected/.test(error)) nodes.push(...startForwarder(request, context, edited));
    return nodes;
  }
  const replayed = `${result.status} in ${Math.round(result.durationMs)} ms`;
  const facts = h(
    'table',
    { class: 'pairs replay-compare' },
    h('caption', { class: 'offscreen', text: 'Original answer and replay answer' }),
    h(
      'tbody',
      {},
      h('tr', {}, h('th', { attrs: { scope: 'row' }, text: 'Original sender got' }), h('td', { text: original })),
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'row' }, text: 'Replay got' }),
        h('td', { class: 'replay-status', text: replayed }),
      ),
      h('tr', {}, h('th', { attrs: { scope: 'row' }, text: 'Sent to' }), h('td', { text: result.target })),
    ),
  );
  const headerRows = result.headers.map(([name, value]) =>
    h('tr', {}, h('th', { attrs: { scope: 'row' }, text: name }), h('td', { text: value })),
  );
  return [
    h('p', { class: 'replay-tag', text: 'Replay (not a captured request)' }),
    facts,
    h('h4', { text: `Answer headers (${result.headers.length})` }),
    h(
      'table',
      { class: 'pairs' },
      h('caption', { class: 'offscreen', text: 'Replay answer headers' }),
      h('tbody', {}, ...headerRows),
    ),
    h('h4', { text: result.bodyTruncated ? 'Answer body (first 4 KiB)' : 'Answer body' }),
    h('pre', {
      class: 'replay-body',
      text:
        result.bodyEncoding === 'base64'
          ? `(binary, ${result.body.length} base64 characters)`
          : result.body || '(empty)',
    }),
  ];
}

/** With no forwarder: the command that starts one, and the request as cURL to send by hand. */
function startForwarder(request: CapturedRequest, context: ReplayContext, edited: EditedRequest | undefined): Node[] {
  const command = `npx hookwatch forward '${context.replays.shareLink()}' --to http://localhost:3000/webhook`;
  const copyOf: CapturedRequest =
    edited === undefined
      ? request
      : {
          ...request,
          method: edited.method,
          url: edited.path,
          subPath: edited.path.split('?')[0] === '/' ? '' : (edited.path.split('?')[0] ?? ''),
          headers: edited.headers,
          body: edited.body,
          bodyEncoding: edited.bodyEncoding,
        };
  return [
    h('p', { text: "Start a forwarder on your machine (replace the --to URL with your app's), then replay again:" }),
    h('pre', { class: 'replay-command', text: command }),
    h(
      'div',
      { class: 'actions' },
      h('button', {
        text: 'Copy command',
        attrs: { type: 'button' },
        on: { click: () => void copy(command, 'Command') },
      }),
      h('button', {
        text: 'Copy as cURL',
        attrs: { type: 'button' },
        on: { click: () => void copy(toCurl(copyOf, replayUrl(copyOf, context.receiverUrl)), 'cURL command') },
      }),
    ),
  ];
}
