// The Hookwatch page: creates or joins a live endpoint, shows requests as they arrive, and
// drives the endpoint's actions. Captured content is only ever set as text.
import type { CapturedRequest } from '../../src/shared/captured-request.js';
import { replayUrl, toCurl } from '../../src/shared/to-curl.js';
import type { ForwardedMessage, ServerMessage, WelcomeMessage } from '../../src/shared/protocol.js';
import { LiveConnection, POLL_MS, type ConnectionState, type Credentials, type EndpointKind, type PageEndpoint } from './connection.js';
import { renderDetail } from './detail.js';
import { byId, confirmAction, copyText, download, h, narrowScreen, toast } from './dom.js';
import { toHar } from './export.js';
import { bodyBytes, searchText, shortPath } from './format.js';
import { ForwardedResults } from './forwarded-results.js';
import { ForwardedView, renderBadge } from './forwarded.js';
import { formatSpan, keptSpan, lifetimeText } from './lifetime.js';
import { LogList } from './log-list.js';
import { describe as describeResponse, ResponseForm } from './response-form.js';
import { renderVerifyPanel } from './verify-panel.js';

const ui = {
  state: byId('state'),
  retryIn: byId('retry-in'),
  retryNow: byId<HTMLButtonElement>('retry-now'),
  url: byId('receiver-url'),
  lifetime: byId('lifetime'),
  endpointKind: byId('endpoint-kind'),
  lifetimeText: byId('lifetime-text'),
  keptName: byId('kept-name'),
  copyUrl: byId<HTMLButtonElement>('copy-url'),
  copyShare: byId<HTMLButtonElement>('copy-share'),
  newUrl: byId<HTMLButtonElement>('new-url'),
  expired: byId('expired'),
  expiredNewUrl: byId<HTMLButtonElement>('expired-new-url'),
  skipLink: byId<HTMLAnchorElement>('skip-link'),
  layout: byId('layout'),
  filter: byId<HTMLInputElement>('filter'),
  method: byId<HTMLSelectElement>('method-filter'),
  count: byId('count'),
  clear: byId<HTMLButtonElement>('clear'),
  exportJson: byId<HTMLButtonElement>('export-json'),
  exportHar: byId<HTMLButtonElement>('export-har'),
  jump: byId<HTMLButtonElement>('jump-latest'),
  list: byId('log'),
  empty: byId('empty'),
  emptyCurl: byId('empty-curl'),
  noMatch: byId('no-match'),
  noMatchText: byId('no-match-text'),
  clearFilter: byId<HTMLButtonElement>('clear-filter'),
  responseForm: byId<HTMLFormElement>('response-form'),
  detail: byId('detail'),
  detailContent: byId('detail-content'),
  back: byId<HTMLButtonElement>('back-to-list'),
  announcer: byId('announcer'),
};

let endpoint: PageEndpoint | undefined;
/** The endpoint the connection was started for, until its welcome arrives. */
let joiningId: string | undefined;
let connectionState: ConnectionState = 'connecting';
/** Oldest first, unique by seq, at most `endpoint.requestsKept`. */
let requests: CapturedRequest[] = [];
/** Highest seq seen and the seq the log was cleared up to: together they count what was received. */
let highestSeq = 0;
let clearedSeq = 0;
let selectedSeq: number | undefined;
/** The open request after newer ones pushed it out of the log: kept on screen until another is picked. */
let pinned: CapturedRequest | undefined;
/** Until the user picks an older request, the newest one is shown as it arrives. */
let followLatest = true;
/** Arrivals while reading an older request (the "N new" cue). */
let unseen = 0;
/** Arrivals while the tab is hidden (the title count). */
let unread = 0;
/** Narrow screens: the detail is shown instead of the list. */
let detailOpen = false;
/** Backlog messages still expected after a welcome: they are not news. */
let backlogLeft = 0;
/** After a resume that lost requests: the seq held before, to count the loss on the first arrival. */
let lostAfter: number | undefined;
/** How many sockets watch the endpoint, this one included; undefined when not known (while polling). */
let watchers: number | undefined;
/** What forwarders got, by seq; kept for the open request too after it left the log. */
const forwarded = new ForwardedResults((seq) => pinned?.seq === seq || requests.some((request) => request.seq === seq));
/** The open detail's "Forwarded" section, updated as results come in. */
let forwardedView: ForwardedView | undefined;

// ---- connection ----

const connection = new LiveConnection({
  state: showState,
  welcome: onWelcome,
  message: onMessage,
  // A poll found requests dropped since the last one: the next arrival counts them.
  gap: () => (lostAfter = Math.max(highestSeq, clearedSeq)),
});
const responseForm = new ResponseForm((response) => {
  if (!connection.send({ type: 'set-response', response })) toast('Not connected');
});

function credentialsFromLink(): Credentials | undefined {
  const match = /^#([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9]{1,128})$/.exec(location.hash);
  return match ? { endpointId: match[1] as string, key: match[2] as string } : undefined;
}

function shareLink(): string {
  return endpoint ? `${location.origin}${location.pathname}#${endpoint.id}.${endpoint.key}` : location.href;
}

/** Watches the given endpoint (or a new one), starting from an empty log. */
function join(credentials: Credentials | undefined): void {
  endpoint = undefined;
  watchers = undefined;
  joiningId = credentials?.endpointId;
  ui.url.textContent = credentials ? 'joining the endpoint…' : 'creating an endpoint…';
  resetLog();
  connection.start(credentials, chosenKind());
  showLifetime();
}

/** The link names another endpoint (Back, Forward, an edited fragment): watch that one. */
function followLink(): void {
  const link = credentialsFromLink();
  if (link && link.endpointId !== (endpoint?.id ?? joiningId)) join(link);
}

function onWelcome(message: WelcomeMessage, resumed: boolean): void {
  if (endpoint?.id !== message.endpoint.id) resetLog();
  endpoint = message.endpoint;
  joiningId = undefined;
  const span = keptSpan(endpoint);
  if (span !== undefined) {
    showKeptSpan(span);
    writeSetting(KEPT_SPAN_KEY, String(span));
  }
  // The link now names this endpoint: a reload or a copied link rejoins it.
  history.replaceState(history.state, '', shareLink());
  ui.url.textContent = endpoint.url;
  ui.emptyCurl.textContent = `curl -X POST '${endpoint.url}' -H 'Content-Type: application/json' -d '{"hello":"world"}'`;
  if (endpoint.partial) responseForm.unknown();
  else responseForm.fill(endpoint.response);
  backlogLeft = message.backlog;
  // `gap` on a first join only means the endpoint dropped requests before this tab came: not news.
  lostAfter = resumed && message.gap ? Math.max(highestSeq, message.clearedSeq) : undefined;
  dropCleared(message.clearedSeq);
  showState(connectionState);
  render();
}

function onMessage(message: ServerMessage): void {
  switch (message.type) {
    case 'request':
      addRequest(message.request);
      break;
    case 'response':
      responseForm.fill(message.response);
      toast(`Senders now get ${describeResponse(message.response)}`);
      break;
    case 'evicted':
      dropEvicted(message.throughSeq);
      render();
      break;
    case 'forwarded':
      addForwarded(message);
      break;
    case 'watchers':
      watchers = message.count;
      break;
    case 'cleared':
      dropCleared(message.clearedSeq);
      render();
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
  connectionState = state;
  const labels: Record<ConnectionState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', polling: 'No live connection', expired: 'Expired' };
  // The same text again is not news for a screen reader.
  if (ui.state.textContent !== labels[state]) ui.state.textContent = labels[state];
  ui.state.dataset.state = state;
  ui.expired.hidden = state !== 'expired';
  ui.copyUrl.disabled = ui.copyShare.disabled = !endpoint || state === 'expired';
  // Polling cannot count the others watching.
  if (state === 'polling') watchers = undefined;
  responseForm.enable(canChange());
  ui.clear.disabled = !canChange() || requests.length === 0;
  showRetry();
  showLifetime();
}

/** The answer and the log can be changed: over the socket, or over HTTP while polling. */
function canChange(): boolean {
  return connectionState === 'live' || connectionState === 'polling';
}

/** While reconnecting: when the next try is due, and a button to try now. While polling: how often, and a button to try live. */
function showRetry(): void {
  const at = connection.nextAttemptAt;
  const waiting = connectionState === 'reconnecting' && at !== undefined;
  const polling = connectionState === 'polling';
  ui.retryIn.hidden = ui.retryNow.hidden = !(waiting || polling);
  if (waiting) ui.retryIn.textContent = `next try in ${Math.max(1, Math.ceil((at - Date.now()) / 1000))} s`;
  else if (polling) ui.retryIn.textContent = `checking every ${POLL_MS / 1000} s`;
  ui.retryNow.textContent = polling ? 'Try live now' : 'Retry now';
}

/** Under the URL: the endpoint's kind, how long it lives (a countdown for a kept one) and what it keeps. */
function showLifetime(): void {
  ui.lifetime.hidden = !endpoint || connectionState === 'expired';
  if (!endpoint || ui.lifetime.hidden) return;
  const kind = endpoint.kind === 'kept' ? 'Kept' : 'Live';
  if (ui.endpointKind.textContent !== kind) ui.endpointKind.textContent = kind;
  ui.endpointKind.dataset.kind = endpoint.kind;
  const text = lifetimeText(endpoint, Date.now());
  if (ui.lifetimeText.textContent !== text) ui.lifetimeText.textContent = text;
}

// ---- the kind of new endpoints: Live or Kept, remembered in this browser ----

const KIND_KEY = 'hookwatch.kind';
const KEPT_SPAN_KEY = 'hookwatch.keptSpanMs';
const kindInputs = [...document.querySelectorAll<HTMLInputElement>('input[name="kind"]')];

/** localStorage may be switched off: the choice then lasts as long as the page. */
function readSetting(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeSetting(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Not remembered.
  }
}

function chosenKind(): EndpointKind {
  return kindInputs.find((input) => input.checked)?.value === 'kept' ? 'kept' : 'live';
}

/** "Kept for 2 h": the server's real span once a kept endpoint told it, 2 h (the default) before. */
function showKeptSpan(ms: number): void {
  ui.keptName.textContent = `Kept for ${formatSpan(ms)}`;
}

{
  const saved = readSetting(KIND_KEY) === 'kept' ? 'kept' : 'live';
  for (const input of kindInputs) {
    input.checked = input.value === saved;
    input.addEventListener('change', () => writeSetting(KIND_KEY, chosenKind()));
  }
  const span = Number(readSetting(KEPT_SPAN_KEY));
  showKeptSpan(span > 0 ? span : 2 * 3600_000);
}

async function newUrl(ask: boolean): Promise<void> {
  if (ask && endpoint && connectionState !== 'expired') {
    const next = chosenKind() === 'kept' ? `kept endpoint (${ui.keptName.textContent?.toLowerCase() ?? 'kept'})` : 'live endpoint (it lives while this tab is open)';
    const left = endpoint.expiresAt ? Date.parse(endpoint.expiresAt) - Date.now() : Number.NaN;
    const current =
      endpoint.kind === 'kept'
        ? `The current URL is kept: it keeps working${left > 0 ? ` for ${formatSpan(left)}` : ''}, watched or not.`
        : `The current URL keeps working while someone watches it, and for ${Number.isFinite(endpoint.graceSeconds) ? `${endpoint.graceSeconds} s` : 'a short grace'} after.`;
    const confirmed = await confirmAction('Make a new URL?', `This tab will watch a new, empty ${next}. ${current} Back returns to it.`, 'Make a new URL');
    if (!confirmed) return;
  }
  detailOpen = false;
  // A new history entry: Back returns to the old endpoint's link (the welcome fills in the new one).
  history.pushState(null, '', location.pathname);
  join(undefined);
}

// ---- the log ----

function resetLog(): void {
  requests = [];
  forwarded.clear();
  highestSeq = clearedSeq = 0;
  selectedSeq = undefined;
  pinned = undefined;
  followLatest = true;
  unseen = 0;
  backlogLeft = 0;
  lostAfter = undefined;
  detailOpen = false;
  render();
}

function addRequest(request: CapturedRequest): void {
  const live = backlogLeft === 0;
  if (!live) backlogLeft--;
  if (request.seq <= clearedSeq || requests.some((held) => held.seq === request.seq)) return;
  if (lostAfter !== undefined) {
    const lost = request.seq - lostAfter - 1;
    if (lost > 0) toast(`${lost} request${lost === 1 ? ' was' : 's were'} dropped while away (the endpoint keeps the newest ${endpoint?.requestsKept ?? 50})`);
    lostAfter = undefined;
  }
  highestSeq = Math.max(highestSeq, request.seq);
  requests.push(request);
  if ((requests.at(-2)?.seq ?? 0) > request.seq) requests.sort((a, b) => a.seq - b.seq);
  const kept = endpoint?.requestsKept ?? 50;
  if (requests.length > kept) {
    const out = requests.slice(0, requests.length - kept);
    requests = requests.slice(-kept);
    pinned = out.find((old) => old.seq === selectedSeq) ?? pinned;
  }
  if (live) {
    announce(request);
    if (document.hidden) {
      unread++;
      updateTitle();
    }
    if (!followLatest) unseen++;
  }
  if (followLatest) selectedSeq = requests.at(-1)?.seq;
  // The detail of a big arrival is built in a task of its own, after the list shows the row.
  render(true);
}

/** The store's byte budget let go of the oldest requests: they count as dropped; an open one stays pinned. */
function dropEvicted(throughSeq: number): void {
  const out = requests.filter((request) => request.seq <= throughSeq);
  if (out.length === 0) return;
  requests = requests.filter((request) => request.seq > throughSeq);
  pinned = out.find((old) => old.seq === selectedSeq) ?? pinned;
}

/** A forwarder's result: on the row's badge and, when that request is open, in its detail. */
function addForwarded(message: ForwardedMessage): void {
  if (message.seq <= clearedSeq) return;
  forwarded.add(message);
  list.refreshBadge(message.seq);
  if (renderedSeq === message.seq) forwardedView?.update(forwarded.get(message.seq));
}

function dropCleared(upTo: number): void {
  clearedSeq = Math.max(clearedSeq, upTo);
  forwarded.dropThrough(clearedSeq);
  requests = requests.filter((request) => request.seq > clearedSeq);
  if (pinned && pinned.seq <= clearedSeq) pinned = undefined;
  if (selectedSeq !== undefined && selectedSeq <= clearedSeq) {
    selectedSeq = undefined;
    followLatest = true;
    unseen = 0;
    closeDetail(false);
  }
}

const searchable = new WeakMap<CapturedRequest, string>();

function matches(request: CapturedRequest): boolean {
  const text = ui.filter.value.trim().toLowerCase();
  if (ui.method.value !== '' && request.method !== ui.method.value) return false;
  if (text === '') return true;
  let haystack = searchable.get(request);
  if (haystack === undefined) searchable.set(request, (haystack = searchText(request)));
  return haystack.includes(text);
}

function filtering(): boolean {
  return ui.filter.value.trim() !== '' || ui.method.value !== '';
}

/** Newest first. */
function visibleRequests(): CapturedRequest[] {
  return requests.filter(matches).reverse();
}

const list = new LogList(ui.list, {
  select: (seq, how) => pick(seq, how),
  badge: (seq) => renderBadge(forwarded.get(seq)),
});

let detailTimer: number | undefined;

/** Shows the state; `deferDetail`: the detail pane catches up in the next task (arrivals come in bursts). */
function render(deferDetail = false): void {
  renderMethodOptions();
  const visible = visibleRequests();
  const received = Math.max(highestSeq, clearedSeq) - clearedSeq;
  const dropped = received - requests.length;
  const counts = `${received} received${dropped > 0 ? `, ${dropped} dropped` : ''}`;
  ui.count.textContent = filtering() ? `${visible.length} shown · ${counts}` : counts;
  ui.count.title = dropped > 0 ? `The endpoint keeps only the newest ${endpoint?.requestsKept ?? 50} requests, within its stored-bytes budget.` : '';
  ui.empty.hidden = requests.length > 0;
  ui.noMatch.hidden = requests.length === 0 || visible.length > 0;
  if (!ui.noMatch.hidden) {
    const text = ui.filter.value.trim();
    const what = [text && `“${text}”`, ui.method.value && `the method ${ui.method.value}`].filter(Boolean).join(' and ');
    ui.noMatchText.textContent = `No request matches ${what}.`;
  }
  ui.exportJson.disabled = ui.exportHar.disabled = requests.length === 0;
  ui.clear.disabled = !canChange() || requests.length === 0;

  list.update(visible, selectedSeq);
  ui.jump.hidden = followLatest || unseen === 0;
  ui.jump.textContent = `${unseen} new — jump to latest`;
  ui.back.textContent = unseen > 0 ? `← Back to list (${unseen} new)` : '← Back to list';
  ui.layout.classList.toggle('show-detail', detailOpen);
  clearTimeout(detailTimer);
  if (deferDetail) detailTimer = window.setTimeout(() => renderSelected(visibleRequests()), 0);
  else renderSelected(visible);
}

/** What the detail pane shows now (-1: nothing rendered yet). */
let renderedSeq: number | undefined = -1;
let renderedEndpoint: string | undefined;

/** Re-renders the detail only when the selection changes, so an open JSON tree stays as it is. */
function renderSelected(visible: CapturedRequest[]): void {
  const held = requests.find((request) => request.seq === selectedSeq);
  const request = held ?? (pinned?.seq === selectedSeq ? pinned : undefined);
  const hidden = request !== undefined && (held ? !visible.includes(held) : !matches(request));
  const shown = hidden ? undefined : request;
  if (shown?.seq !== renderedSeq || endpoint?.url !== renderedEndpoint) {
    renderedSeq = shown?.seq;
    renderedEndpoint = endpoint?.url;
    forwardedView = undefined;
    if (!shown || !endpoint) {
      const text = hidden ? 'The selected request is hidden by the filter.' : requests.length > 0 ? 'Select a request to see it here.' : endpoint ? 'Requests appear here as they arrive.' : '';
      ui.detailContent.replaceChildren(h('p', { class: 'muted placeholder', text }));
    } else {
      forwardedView = new ForwardedView(forwarded.get(shown.seq));
      const panels = { forwarded: forwardedView.element, verify: renderVerifyPanel(shown) };
      ui.detailContent.replaceChildren(renderDetail(shown, endpoint.url, { copyCurl, copyJson, downloadBody, copy: (text, what) => void copy(text, what) }, panels));
      // Another request starts at its top.
      ui.detail.scrollTop = 0;
      if (detailOpen && ui.detail.getBoundingClientRect().top < 0) ui.detail.scrollIntoView({ block: 'start' });
    }
  }
  const gone = ui.detailContent.querySelector<HTMLElement>('.gone');
  if (gone) gone.hidden = !(shown && shown === pinned);
}

/** The reader chose a request: by moving (keys), clicking, or Enter. */
function pick(seq: number, how: 'move' | 'click' | 'enter'): void {
  selectedSeq = seq;
  if (pinned && pinned.seq !== seq) pinned = undefined;
  followLatest = seq === requests.at(-1)?.seq;
  if (how !== 'move' && narrowScreen.matches) {
    // Narrow: the detail takes the screen, and stays on this request while newer ones arrive.
    followLatest = false;
    if (!detailOpen) {
      detailOpen = true;
      history.pushState({ detail: seq }, '', location.href);
    }
  }
  if (followLatest) unseen = 0;
  render();
  if (how === 'enter' || (how === 'click' && detailOpen)) {
    if (detailOpen) ui.detail.scrollIntoView({ block: 'start' });
    ui.detail.focus({ preventScroll: true });
  }
}

/** Narrow screens: back from the detail to the list, onto the row that was open. */
function closeDetail(focusList = true): void {
  if (!detailOpen) return;
  detailOpen = false;
  followLatest = selectedSeq === undefined || selectedSeq === requests.at(-1)?.seq;
  if (followLatest) unseen = 0;
  render();
  if (!focusList) return;
  list.reveal();
  ui.list.focus({ preventScroll: true });
}

function move(step: number): void {
  const seq = list.neighbour(step);
  if (seq === undefined) return;
  pick(seq, 'move');
  list.reveal();
}

function jumpToLatest(): void {
  const newest = visibleRequests()[0] ?? requests.at(-1);
  if (!newest) return;
  pinned = undefined;
  selectedSeq = newest.seq;
  followLatest = true;
  unseen = 0;
  render();
  list.scrollToTop();
}

function renderMethodOptions(): void {
  const methods = [...new Set(requests.map((request) => request.method))].sort();
  const current = [...ui.method.options].slice(1).map((option) => option.value);
  if (methods.join() === current.join()) return;
  const chosen = ui.method.value;
  ui.method.replaceChildren(h('option', { attrs: { value: '' }, text: 'All methods' }), ...methods.map((method) => h('option', { attrs: { value: method }, text: method })));
  ui.method.value = methods.includes(chosen) ? chosen : '';
}

// ---- announcements ----

let announcePending: CapturedRequest[] = [];
let announceTimer: number | undefined;

/** Tells screen readers about new requests, at most one message a second and a half: "3 new requests". */
function announce(request: CapturedRequest): void {
  announcePending.push(request);
  announceTimer ??= window.setTimeout(() => {
    const [first] = announcePending;
    ui.announcer.textContent = announcePending.length === 1 && first ? `New request: ${first.method} ${shortPath(first)}` : `${announcePending.length} new requests`;
    announcePending = [];
    announceTimer = undefined;
  }, 1500);
}

// ---- actions ----

async function copy(text: string, what: string): Promise<void> {
  toast((await copyText(text)) ? `${what} copied` : `Could not copy ${what.toLowerCase()}`);
}

function selectedRequest(): CapturedRequest | undefined {
  return requests.find((held) => held.seq === selectedSeq) ?? (pinned?.seq === selectedSeq ? pinned : undefined);
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

async function clearLog(): Promise<void> {
  const count = requests.length;
  const what = count === 1 ? 'the 1 request' : `all ${count} requests`;
  // Name the others when the server counted them; say nothing of others when this tab is alone.
  const confirmed =
    watchers === undefined
      ? await confirmAction('Clear the log?', `This removes ${what} for everyone watching this endpoint, not only this tab. It cannot be undone.`, 'Clear for everyone')
      : watchers > 1
        ? await confirmAction(`Clear the log for all ${watchers} tabs watching this endpoint?`, `This removes ${what} in each of them, not only in this tab. It cannot be undone.`, `Clear for all ${watchers}`)
        : await confirmAction('Clear the log?', `This removes ${what}. It cannot be undone.`, 'Clear');
  if (confirmed && !connection.send({ type: 'clear' })) toast('Not connected');
}

function updateTitle(): void {
  document.title = unread > 0 ? `(${unread}) Hookwatch` : 'Hookwatch';
}

// ---- wiring ----

ui.copyUrl.addEventListener('click', () => endpoint && void copy(endpoint.url, 'URL'));
ui.copyShare.addEventListener('click', () => void copy(shareLink(), 'Share link'));
ui.newUrl.addEventListener('click', () => void newUrl(true));
ui.expiredNewUrl.addEventListener('click', () => void newUrl(false));
ui.retryNow.addEventListener('click', () => connection.retryNow());
ui.clear.addEventListener('click', () => void clearLog());
ui.filter.addEventListener('input', () => render());
ui.method.addEventListener('change', () => render());
ui.clearFilter.addEventListener('click', () => {
  ui.filter.value = '';
  ui.method.value = '';
  render();
  ui.filter.focus();
});
ui.jump.addEventListener('click', jumpToLatest);
ui.back.addEventListener('click', () => {
  // Opening pushed a history entry: going back through it keeps the phone's Back button in step.
  if ((history.state as { detail?: number } | null)?.detail !== undefined) history.back();
  else closeDetail();
});
ui.exportJson.addEventListener('click', () => download(`hookwatch-${endpoint?.id ?? 'log'}.json`, JSON.stringify(requests, null, 2), 'application/json'));
ui.exportHar.addEventListener('click', () => endpoint && download(`hookwatch-${endpoint.id}.har`, toHar(requests, endpoint.url), 'application/json'));
ui.skipLink.addEventListener('click', (event) => {
  event.preventDefault();
  if (narrowScreen.matches && !detailOpen) {
    if (selectedRequest()) pick(selectedSeq as number, 'enter');
    else ui.responseForm.querySelector('select')?.focus();
    return;
  }
  ui.detail.focus();
});

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) {
    unread = 0;
    updateTitle();
  }
});

document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  if (event.ctrlKey || event.metaKey || event.altKey || target.closest('input, textarea, select, dialog')) return;
  if (event.key === 'j') move(1);
  else if (event.key === 'k') move(-1);
  else if (event.key === 'c') {
    const request = selectedRequest();
    if (request) copyCurl(request);
  } else if (event.key === '/') ui.filter.focus();
  else if (event.key === 'Escape' && detailOpen) ui.back.click();
  else return;
  event.preventDefault();
});

window.addEventListener('popstate', () => {
  followLink();
  if ((history.state as { detail?: number } | null)?.detail === undefined) closeDetail();
});
window.addEventListener('hashchange', followLink);
narrowScreen.addEventListener('change', () => {
  if (!narrowScreen.matches) closeDetail(false);
});

// Relative times ("5 s ago"), the reconnect countdown and a kept endpoint's (its text changes
// each minute, then each second in the last minute).
window.setInterval(() => {
  list.refreshTimes();
  showRetry();
  showLifetime();
}, 1000);

render();
join(credentialsFromLink());
