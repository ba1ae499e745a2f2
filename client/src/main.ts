// The Hookwatch page: creates or joins a live endpoint, shows requests as they arrive, and
// drives the endpoint's actions. Captured content is only ever set as text. This module wires the
// parts together: the connection (connection.ts), the log and its views (log-screen.ts), the
// header (endpoint-bar.ts) and the answer form (response-form.ts).
import {
  createEndpoint,
  deleteEndpoint as deleteOnServer,
  deleteRequest as deleteRequestOnServer,
  extendEndpoint,
} from '../../src/shared/api-client.js';
import type { EndpointInfo, ServerMessage, WelcomeMessage } from '../../src/shared/protocol.js';
import { askAccess, pageApi } from './transport/access.js';
import { confirmClear, confirmNewUrl, copy, copyCurl } from './log/actions.js';
import { LiveConnection, type ConnectionState, type Credentials, type PageEndpoint } from './transport/connection.js';
import { byId, confirmAction, toast } from './dom.js';
import { EndpointBar } from './endpoint/endpoint-bar.js';
import {
  lastAlive,
  listedExpired,
  listedName,
  listedSummary,
  listForget,
  listOpened,
  listUpdate,
  readList,
  type ListStorage,
} from './endpoint/endpoint-list.js';
import { credentialsFromLink, shareLink } from './endpoint/endpoint.js';
import { Replays } from './transport/replays.js';
import { formatSpan } from './endpoint/lifetime.js';
import { detailInHistory, LogScreen } from './log/log-screen.js';
import { describe as describeResponse, ResponseForm } from './answer/response-form.js';
import { rememberEndpoint } from './endpoint/settings.js';

let endpoint: PageEndpoint | undefined;
/** The endpoint the connection was started for, until its welcome arrives. */
let joiningId: string | undefined;
/** The endpoint a visit to `/` went back to from the list, until its welcome: when it turns out gone, a new one is made instead. */
let reopenedId: string | undefined;
/** This browser's list of endpoints (endpoint-list.ts); undefined where storage is switched off. */
const storage: ListStorage | undefined = (() => {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
})();
let connectionState: ConnectionState = 'connecting';
/** The user the server knows this page by (ACCESS_MODE token or proxy); undefined on an open instance. */
let signedInUser: string | undefined;
/** How many sockets watch the endpoint, this one included; undefined when not known (while polling). */
let watchers: number | undefined;

/** The answer and the log can be changed: over the socket, or over HTTP while polling. */
const canChange = () => connectionState === 'live' || connectionState === 'polling';

const connection = new LiveConnection({
  state: showState,
  welcome: onWelcome,
  message: onMessage,
  // A poll found requests dropped since the last one: the next arrival counts them.
  gap: () => screen.log.gap(),
});
const responseForm = new ResponseForm((response) => {
  if (connection.send({ type: 'set-response', response })) return true;
  toast('Not connected');
  return false;
});
// Replays go through the socket to the endpoint's hookwatch forward (replays.ts).
const replays = new Replays(
  (message) => connection.send(message),
  () => shareLink(endpoint, location),
);
const screen = new LogScreen({
  replays,
  endpoint: () => endpoint,
  canChange,
  expired: () => connectionState === 'expired',
  clear: () => void clearLog(),
  deleteRequest: (seq) => void deleteRequest(seq),
  rules: () => responseForm.appliedRules,
});
const bar = new EndpointBar(
  { state: () => connectionState, endpoint: () => endpoint, nextAttemptAt: () => connection.nextAttemptAt },
  {
    copyUrl: () => endpoint && void copy(endpoint.url, 'URL'),
    copyShareLink: () => void copy(shareLink(endpoint, location), 'Share link'),
    newUrl: (ask) => void newUrl(ask),
    retryNow: () => connection.retryNow(),
    extend: (ttlMs) => void extend(ttlMs),
  },
);
byId('endpoints-open').addEventListener('click', () => void openList());
byId('endpoints-close').addEventListener('click', () => byId<HTMLDialogElement>('endpoints-dialog').close());

/** Watches the given endpoint (or a new one), starting from an empty log. */
function join(credentials: Credentials | undefined): void {
  endpoint = undefined;
  watchers = undefined;
  joiningId = credentials?.endpointId;
  bar.showJoining(credentials !== undefined);
  responseForm.reset();
  responseForm.showResponder(false);
  screen.reset();
  connection.start(credentials, bar.chosenKind(), bar.keptOptions(false));
  bar.tick();
}

/** The link names another endpoint (Back, Forward, an edited fragment): watch that one. */
function followLink(): void {
  const link = credentialsFromLink(location.hash);
  if (link && link.endpointId !== (endpoint?.id ?? joiningId)) join(link);
}

function onWelcome(message: WelcomeMessage, resumed: boolean): void {
  if (endpoint?.id !== message.endpoint.id) screen.reset();
  endpoint = message.endpoint;
  joiningId = reopenedId = undefined;
  listOpened(storage, endpoint, Date.now());
  bar.showEndpoint(endpoint);
  // The link now names this endpoint: a reload or a copied link rejoins it.
  history.replaceState(history.state, '', shareLink(endpoint, location));
  if (endpoint.partial) responseForm.unknown();
  // Folded when first known; a resume leaves it as the reader had it.
  else responseForm.fill(endpoint.response, !resumed);
  // A tab that joins after a `hookwatch forward --respond` claimed the endpoint learns it here.
  responseForm.showResponder(endpoint.responder !== undefined);
  screen.welcome(message, resumed);
  screen.rulesChanged();
  showState(connectionState);
  screen.render();
}

function onMessage(message: ServerMessage): void {
  if (replays.handle(message)) return;
  switch (message.type) {
    case 'request':
      screen.arrived(message.request);
      return countRequests();
    case 'response':
      responseForm.fill(message.response);
      screen.rulesChanged();
      return toast(`Senders now get ${describeResponse(message.response)}`);
    case 'answered':
      return screen.answered(message.seq, message.answer);
    case 'responder':
      return responseForm.showResponder(message.id !== null);
    case 'evicted':
      return screen.evicted(message.throughSeq);
    case 'forwarded':
      return screen.forwarded(message);
    case 'extended':
      return extended(message.expiresAt);
    case 'watchers':
      watchers = message.count;
      return;
    case 'removed':
      return screen.removed(message.seq);
    case 'cleared':
      screen.cleared(message.clearedSeq);
      countRequests();
      return toast('Log cleared');
    case 'error':
      if (message.error.code === 'INVALID_RESPONSE_CONFIG') {
        // Marked on the form's fields; what names no field is said here.
        for (const { message: text } of responseForm.refused(message.error.message)) toast(text);
      } else if (message.error.code !== 'ENDPOINT_NOT_FOUND') toast(message.error.message);
      return;
    default:
      return;
  }
}

/** The list shows how many requests the endpoint took, as this tab last counted. */
function countRequests(): void {
  if (endpoint) listUpdate(storage, endpoint.id, { requests: screen.log.received });
}

function showState(state: ConnectionState): void {
  if (state === 'expired') {
    const gone = endpoint?.id ?? joiningId;
    // Gone for good: its key opens nothing any more.
    if (gone !== undefined) listForget(storage, gone);
    // A visit to `/` went back to a kept endpoint that has gone since: make a new one instead.
    if (reopenedId !== undefined && reopenedId === joiningId) {
      reopenedId = undefined;
      join(undefined);
      return;
    }
  }
  connectionState = state;
  // Polling cannot count the others watching.
  if (state === 'polling') watchers = undefined;
  bar.showState();
  responseForm.enable(canChange());
  responseForm.hide(state === 'expired');
  // The empty log says the endpoint expired.
  screen.render();
}

async function newUrl(ask: boolean): Promise<void> {
  if (
    ask &&
    endpoint &&
    connectionState !== 'expired' &&
    !(await confirmNewUrl(endpoint, bar.chosenKind(), bar.keptName()))
  )
    return;
  // A kept one is made over HTTP first, so that a refused name leaves this endpoint as it is; then joined.
  const kept = bar.chosenKind() === 'kept' ? await createKept() : undefined;
  if (kept === null) return;
  // A new history entry: Back returns to the old endpoint's link (the welcome fills in the new one).
  history.pushState(null, '', location.pathname);
  join(kept && { endpointId: kept.id, key: kept.key });
}

/** `POST /api/endpoints` with the chosen lifetime, name and redaction; null when refused (the reason shown). */
async function createKept(): Promise<EndpointInfo | null> {
  const answer = await createEndpoint(pageApi(), { kind: 'kept', ...bar.keptOptions(true) });
  if (answer.ok) {
    bar.nameUsed();
    return answer.value;
  }
  const { error } = answer;
  const message =
    error?.message ??
    (answer.status === 0
      ? 'The server did not answer: no new URL was made.'
      : `The server answered ${answer.status}: no new URL was made.`);
  // The name's own trouble goes next to it; anything else is said once.
  if (error && (error.code === 'NAME_TAKEN' || /\bname\b/i.test(error.message))) bar.showNameError(message);
  else toast(message);
  return null;
}

/** The kept endpoint lives `ttlMs` from now; every tab watching hears `extended`. */
async function extend(ttlMs: number): Promise<void> {
  const current = endpoint;
  if (!current || current.kind !== 'kept') return;
  const answer = await extendEndpoint(pageApi(), current, ttlMs);
  if (endpoint !== current) return;
  if (answer.ok) extended(answer.value.expiresAt);
  else toast(answer.error?.message ?? `Not extended: the server answered ${answer.status || 'nothing'}`);
}

/** The endpoint's new expiry, from this tab's Extend or another's (the `extended` message). */
function extended(expiresAt: string): void {
  if (!endpoint || endpoint.expiresAt === expiresAt) return;
  endpoint = { ...endpoint, expiresAt };
  if (!endpoint.partial) rememberEndpoint(endpoint);
  listUpdate(storage, endpoint.id, { expiresAt });
  bar.tick();
  toast(`Extended: expires in ${formatSpan(Date.parse(expiresAt) - Date.now())}`);
}

/** "Your endpoints": this browser's list, to reopen, forget or delete one; with a server-side user, the user's own from the server too. */
async function openList(): Promise<void> {
  const [{ showEndpointList }, own] = await Promise.all([
    import('./endpoint/endpoints-panel.js'),
    signedInUser === undefined ? undefined : import('./endpoint/own-endpoints.js'),
  ]);
  let owned = own ? await own.fetchOwnEndpoints() : [];
  const items = () => {
    const kept = readList(storage).map((entry) => ({
      id: entry.id,
      name: listedName(entry),
      summary: listedSummary(entry, Date.now()),
      current: entry.id === endpoint?.id && connectionState !== 'expired',
      expired: listedExpired(entry, Date.now()),
    }));
    const here = new Set(kept.map((item) => item.id));
    // The server's newest first, after this browser's, without those this browser holds already.
    const fromServer = own
      ? owned
          .filter((listed) => !here.has(listed.id))
          .reverse()
          .map((listed) =>
            own.ownListItem(listed, connectionState === 'expired' ? undefined : endpoint?.id, Date.now()),
          )
      : [];
    return [...kept, ...fromServer];
  };
  showEndpointList(items, {
    open: (id) => {
      if (id === endpoint?.id) return;
      const entry = readList(storage).find((listed) => listed.id === id);
      // Not held here: one of the user's own on the server, which its creator opens without the key.
      if (!entry && !owned.some((listed) => listed.id === id)) return;
      history.pushState(null, '', location.pathname);
      join({ endpointId: id, key: entry?.key ?? '' });
    },
    forget: (id) => listForget(storage, id),
    remove: async (id) => {
      if (await deleteEndpoint(id)) owned = owned.filter((listed) => listed.id !== id);
    },
  });
}

/** Deletes a listed endpoint on the server, after asking: its URL answers 404 at once, for everyone. True when it is gone. */
async function deleteEndpoint(id: string): Promise<boolean> {
  // One of the user's own on the server, not held here: its creator deletes it without the key.
  const entry =
    readList(storage).find((listed) => listed.id === id) ??
    (signedInUser === undefined ? undefined : { id, key: '', requests: 0 });
  if (!entry) return false;
  const requests = entry.id === endpoint?.id ? screen.log.received : entry.requests;
  const what = requests === 1 ? 'its 1 request' : `its ${requests} requests`;
  if (
    !(await confirmAction(
      `Delete ${entry.id}?`,
      `Its URL answers 404 from now on, and ${what} and its answer are deleted for everyone watching it. It cannot be undone.`,
      'Delete endpoint',
    ))
  )
    return false;
  const answer = await deleteOnServer(pageApi(), entry);
  // 404: gone already (expired, or deleted elsewhere): off the list all the same.
  if (answer.status === 204 || answer.status === 404) {
    listForget(storage, entry.id);
    toast(`Deleted ${entry.id}`);
    return true;
  }
  toast(`Not deleted: the server answered ${answer.status || 'nothing'}`);
  return false;
}

/** Deletes one request on the server, after asking: it goes for everyone watching (they get `removed`). */
async function deleteRequest(seq: number): Promise<void> {
  const current = endpoint;
  if (!current) return;
  if (
    !(await confirmAction(
      `Delete request #${seq}?`,
      'It is deleted on the server, for everyone watching this endpoint, with what forwarders reported for it. It cannot be undone.',
      'Delete request',
    ))
  )
    return;
  const answer = await deleteRequestOnServer(pageApi(), current, seq);
  // Not stored any more (trimmed, or deleted from another tab): off this list all the same.
  if (answer.ok || answer.error?.code === 'REQUEST_NOT_FOUND') {
    screen.removed(seq);
    countRequests();
    toast(`Deleted request #${seq}`);
  } else toast(`Not deleted: the server answered ${answer.status || 'nothing'}`);
}

async function clearLog(): Promise<void> {
  if ((await confirmClear(screen.log.requests.length, watchers)) && !connection.send({ type: 'clear' }))
    toast('Not connected');
}

byId('skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  screen.skipToDetail(() => byId('response-toggle').focus());
});

document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  if (event.ctrlKey || event.metaKey || event.altKey || target.closest('input, textarea, select, dialog')) return;
  if (event.key === 'j') screen.move(1);
  else if (event.key === 'k') screen.move(-1);
  else if (event.key === 'c') {
    const request = screen.selectedRequest;
    if (request) copyCurl(request, endpoint);
  } else if (event.key === '/') screen.focusFilter();
  else if (event.key === 'Escape' && screen.detailOpen) screen.back();
  else return;
  event.preventDefault();
});

window.addEventListener('popstate', () => {
  followLink();
  if (!detailInHistory()) screen.closeDetail();
});
window.addEventListener('hashchange', followLink);

// Relative times ("5 s ago"), the reconnect countdown and a kept endpoint's (its text changes
// each minute, then each second in the last minute).
window.setInterval(() => {
  screen.refreshTimes();
  bar.tick();
}, 1000);

screen.render();
/** A link names the endpoint; without one, the kept endpoint this browser last opened, while it lives; else a new one. */
function firstEndpoint(): Parameters<typeof join>[0] {
  const link = credentialsFromLink(location.hash);
  if (link) return link;
  const last = lastAlive(readList(storage), Date.now());
  if (!last) return undefined;
  reopenedId = last.id;
  return { endpointId: last.id, key: last.key };
}
/**
 * Asks the server who may use it first: a private instance (ACCESS_MODE=token) needs a token
 * before anything is made or joined, and with a server-side user "Your endpoints" shows the
 * user's own from the server as well.
 */
async function start(): Promise<void> {
  let access = await askAccess();
  if (access?.mode === 'token' && access.user === null) {
    let signIn;
    try {
      ({ signIn } = await import('./endpoint/sign-in.js'));
    } catch {
      // Without the form nothing can be made or joined here: say so rather than leave a blank page.
      return toast('The sign-in form could not be loaded: reload the page to try again.');
    }
    access = { mode: 'token', user: await signIn() };
  }
  signedInUser = access?.user ?? undefined;
  join(firstEndpoint());
}
void start();
