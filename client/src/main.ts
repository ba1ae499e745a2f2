// The Hookwatch page: creates or joins a live endpoint, shows requests as they arrive, and
// drives the endpoint's actions. Captured content is only ever set as text.
import type { CapturedRequest } from '../../src/capture/captured-request.js';
import { replayUrl, toCurl } from '../../src/capture/to-curl.js';
import type { EndpointInfo, ServerMessage, WelcomeMessage } from '../../src/live/protocol.js';
import type { ResponseConfig } from '../../src/response-config.js';
import { LiveConnection, type ConnectionState, type Credentials } from './connection.js';
import { renderDetail } from './detail.js';
import { byId, copyText, download, h, toast } from './dom.js';
import { toHar } from './export.js';
import { bodyBytes, formatBytes, searchText, shortPath, timeOfDay } from './format.js';

const ui = {
  state: byId('state'),
  url: byId<HTMLInputElement>('receiver-url'),
  copyUrl: byId<HTMLButtonElement>('copy-url'),
  copyShare: byId<HTMLButtonElement>('copy-share'),
  newUrl: byId<HTMLButtonElement>('new-url'),
  expired: byId('expired'),
  expiredNewUrl: byId<HTMLButtonElement>('expired-new-url'),
  responseForm: byId<HTMLFormElement>('response-form'),
  status: byId<HTMLSelectElement>('response-status'),
  contentType: byId<HTMLSelectElement>('response-content-type'),
  body: byId<HTMLTextAreaElement>('response-body'),
  filter: byId<HTMLInputElement>('filter'),
  method: byId<HTMLSelectElement>('method-filter'),
  count: byId('count'),
  clear: byId<HTMLButtonElement>('clear'),
  exportJson: byId<HTMLButtonElement>('export-json'),
  exportHar: byId<HTMLButtonElement>('export-har'),
  list: byId<HTMLOListElement>('log'),
  empty: byId('empty'),
  emptyCurl: byId('empty-curl'),
  detail: byId('detail'),
};

let endpoint: EndpointInfo | undefined;
/** Oldest first, unique by seq, at most `endpoint.requestsKept`. */
let requests: CapturedRequest[] = [];
let selectedSeq: number | undefined;
/** Until the user picks a request, the newest one is shown as it arrives. */
let followLatest = true;
let unread = 0;

// ---- connection ----

const connection = new LiveConnection({
  state: showState,
  welcome: onWelcome,
  message: onMessage,
});

function credentialsFromLink(): Credentials | undefined {
  const match = /^#([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9]{1,128})$/.exec(location.hash);
  return match ? { endpointId: match[1] as string, key: match[2] as string } : undefined;
}

function shareLink(): string {
  return endpoint ? `${location.origin}${location.pathname}#${endpoint.id}.${endpoint.key}` : location.href;
}

function onWelcome(message: WelcomeMessage): void {
  const changed = endpoint?.id !== message.endpoint.id;
  endpoint = message.endpoint;
  if (changed) resetLog();
  // The link now names this endpoint: a reload or a copied link rejoins it.
  history.replaceState(null, '', shareLink());
  ui.url.value = endpoint.url;
  ui.emptyCurl.textContent = `curl -X POST '${endpoint.url}' -H 'Content-Type: application/json' -d '{"hello":"world"}'`;
  fillResponseForm(endpoint.response);
  dropCleared(message.clearedSeq);
  if (message.gap) toast('Some requests were dropped while away (only the newest are kept)');
}

function onMessage(message: ServerMessage): void {
  switch (message.type) {
    case 'request':
      addRequest(message.request);
      break;
    case 'response':
      fillResponseForm(message.response);
      toast(`Senders now get ${message.response.status}`);
      break;
    case 'cleared':
      dropCleared(message.clearedSeq);
      toast('Log cleared');
      break;
    case 'error':
      if (message.error.code !== 'ENDPOINT_NOT_FOUND') toast(message.error.message);
      break;
    default:
      break;
  }
}

function showState(state: ConnectionState): void {
  const labels: Record<ConnectionState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', expired: 'Expired' };
  ui.state.textContent = labels[state];
  ui.state.dataset.state = state;
  ui.expired.hidden = state !== 'expired';
  for (const control of [ui.clear, ...ui.responseForm.querySelectorAll<HTMLButtonElement>('button')]) control.disabled = state !== 'live';
}

function newUrl(): void {
  endpoint = undefined;
  resetLog();
  history.replaceState(null, '', location.pathname);
  ui.url.value = '';
  connection.start(undefined);
}

// ---- the log ----

function resetLog(): void {
  requests = [];
  selectedSeq = undefined;
  followLatest = true;
  render();
}

function addRequest(request: CapturedRequest): void {
  if (requests.some((held) => held.seq === request.seq)) return;
  requests.push(request);
  requests.sort((a, b) => a.seq - b.seq);
  const kept = endpoint?.requestsKept ?? 50;
  if (requests.length > kept) requests = requests.slice(-kept);
  if (document.hidden) {
    unread++;
    updateTitle();
  }
  if (followLatest) selectedSeq = requests.at(-1)?.seq;
  render();
}

function dropCleared(clearedSeq: number): void {
  const before = requests.length;
  requests = requests.filter((request) => request.seq > clearedSeq);
  if (requests.length === before) return;
  if (!requests.some((request) => request.seq === selectedSeq)) {
    selectedSeq = undefined;
    followLatest = true;
  }
  render();
}

function visibleRequests(): CapturedRequest[] {
  const text = ui.filter.value.trim().toLowerCase();
  const method = ui.method.value;
  return requests.filter((request) => (method === '' || request.method === method) && (text === '' || searchText(request).includes(text))).reverse();
}

function render(): void {
  renderMethodOptions();
  const visible = visibleRequests();
  ui.count.textContent = visible.length === requests.length ? `${requests.length}` : `${visible.length} of ${requests.length}`;
  ui.empty.hidden = requests.length > 0;
  ui.exportJson.disabled = ui.exportHar.disabled = requests.length === 0;

  // New rows go on top; keep what the reader is looking at where it is.
  const list = ui.list;
  const scrolled = list.scrollTop > 0;
  const heightBefore = list.scrollHeight;
  list.replaceChildren(...visible.map(listItem));
  if (scrolled) list.scrollTop += list.scrollHeight - heightBefore;

  renderSelected();
}

function listItem(request: CapturedRequest): HTMLElement {
  const selected = request.seq === selectedSeq;
  const button = h(
    'button',
    {
      class: 'row',
      attrs: { type: 'button', 'aria-pressed': String(selected), 'data-seq': String(request.seq) },
      on: { click: () => select(request.seq, true) },
    },
    h('span', { class: `method method-${request.method.toLowerCase()}`, text: request.method }),
    h('span', { class: 'path', text: shortPath(request) }),
    h('span', { class: 'meta' }, h('time', { attrs: { datetime: request.receivedAt }, text: timeOfDay(request.receivedAt) }), h('span', { text: formatBytes(request.size) })),
  );
  return h('li', { class: selected ? 'selected' : '' }, button);
}

/** What the detail pane shows now (-1: nothing rendered yet). */
let renderedSeq: number | undefined = -1;
let renderedEndpoint: string | undefined;

/** Re-renders the detail only when the selection changes, so an open JSON tree stays as it is. */
function renderSelected(): void {
  const request = requests.find((held) => held.seq === selectedSeq);
  if (request?.seq === renderedSeq && endpoint?.url === renderedEndpoint) return;
  renderedSeq = request?.seq;
  renderedEndpoint = endpoint?.url;
  if (!request || !endpoint) {
    ui.detail.replaceChildren(h('p', { class: 'muted placeholder', text: requests.length > 0 ? 'Select a request to see it here.' : '' }));
    return;
  }
  ui.detail.replaceChildren(renderDetail(request, endpoint.url, { copyCurl, copyJson, downloadBody }));
}

function select(seq: number | undefined, byUser: boolean): void {
  selectedSeq = seq;
  if (byUser) followLatest = seq === requests.at(-1)?.seq;
  render();
  ui.list.querySelector<HTMLElement>(`[data-seq="${seq}"]`)?.scrollIntoView({ block: 'nearest' });
}

/** Moves the selection through the visible rows: +1 is older (down), -1 newer (up). */
function move(step: number): void {
  const visible = visibleRequests();
  if (visible.length === 0) return;
  const index = visible.findIndex((request) => request.seq === selectedSeq);
  const next = visible[Math.min(visible.length - 1, Math.max(0, index === -1 ? 0 : index + step))];
  select(next?.seq, true);
  ui.list.querySelector<HTMLElement>(`[data-seq="${next?.seq}"]`)?.focus();
}

function renderMethodOptions(): void {
  const methods = [...new Set(requests.map((request) => request.method))].sort();
  const current = [...ui.method.options].slice(1).map((option) => option.value);
  if (methods.join() === current.join()) return;
  const chosen = ui.method.value;
  ui.method.replaceChildren(h('option', { attrs: { value: '' }, text: 'All methods' }), ...methods.map((method) => h('option', { attrs: { value: method }, text: method })));
  ui.method.value = methods.includes(chosen) ? chosen : '';
}

// ---- actions ----

async function copy(text: string, what: string): Promise<void> {
  toast((await copyText(text)) ? `${what} copied` : `Could not copy ${what.toLowerCase()}`);
}

function copyCurl(request: CapturedRequest): void {
  if (endpoint) void copy(toCurl(request, replayUrl(request, endpoint.url)), 'cURL command');
}

function copyJson(request: CapturedRequest): void {
  void copy(JSON.stringify(request, null, 2), 'JSON');
}

function downloadBody(request: CapturedRequest): void {
  const extension = request.isJson ? 'json' : request.bodyEncoding === 'base64' ? 'bin' : 'txt';
  download(`request-${request.seq}.${extension}`, bodyBytes(request) as BlobPart, request.contentType ?? 'application/octet-stream');
}

function fillResponseForm(response: ResponseConfig): void {
  ui.status.value = String(response.status);
  ui.contentType.value = response.contentType;
  ui.body.value = response.body;
  ui.body.disabled = response.status === 204;
}

function updateTitle(): void {
  document.title = unread > 0 ? `(${unread}) Hookwatch` : 'Hookwatch';
}

// ---- wiring ----

ui.copyUrl.addEventListener('click', () => void copy(ui.url.value, 'URL'));
ui.copyShare.addEventListener('click', () => void copy(shareLink(), 'Share link'));
ui.newUrl.addEventListener('click', newUrl);
ui.expiredNewUrl.addEventListener('click', newUrl);
ui.clear.addEventListener('click', () => connection.send({ type: 'clear' }));
ui.filter.addEventListener('input', render);
ui.method.addEventListener('change', render);
ui.status.addEventListener('change', () => (ui.body.disabled = ui.status.value === '204'));
ui.exportJson.addEventListener('click', () => download(`hookwatch-${endpoint?.id ?? 'log'}.json`, JSON.stringify(requests, null, 2), 'application/json'));
ui.exportHar.addEventListener('click', () => endpoint && download(`hookwatch-${endpoint.id}.har`, toHar(requests, endpoint.url), 'application/json'));
ui.responseForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const response = { status: Number(ui.status.value), body: ui.status.value === '204' ? '' : ui.body.value, contentType: ui.contentType.value };
  if (!connection.send({ type: 'set-response', response: response as ResponseConfig })) toast('Not connected');
});

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) {
    unread = 0;
    updateTitle();
  }
});

document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  if (event.ctrlKey || event.metaKey || event.altKey || target.closest('input, textarea, select')) return;
  if (event.key === 'j' || event.key === 'ArrowDown') move(1);
  else if (event.key === 'k' || event.key === 'ArrowUp') move(-1);
  else if (event.key === 'c') {
    const request = requests.find((held) => held.seq === selectedSeq);
    if (request) copyCurl(request);
  } else if (event.key === '/') ui.filter.focus();
  else return;
  event.preventDefault();
});

window.addEventListener('hashchange', () => {
  const link = credentialsFromLink();
  if (link && link.endpointId !== endpoint?.id) {
    endpoint = undefined;
    resetLog();
    connection.start(link);
  }
});

render();
connection.start(credentialsFromLink());
