/**
 * The live protocol, version 1 (docs/protocol.md). JSON text frames with a `type` field over a
 * WebSocket at `/api/live`, negotiated with the subprotocol `hookwatch.v1`. The browser page
 * imports these types; nothing here depends on Node.
 */
import type { CapturedRequest, RecordedAnswer } from './captured-request.js';
import type { ResponseConfig } from './response-config.js';

export const SUBPROTOCOL = 'hookwatch.v1';
export const LIVE_PATH = '/api/live';
/** Receiver URL paths, `<prefix><id>`: live endpoints and kept ones (docs/glossary.md). */
export const RECEIVER_PREFIXES = { live: '/api/webhook-tester/', kept: '/api/webhook-endpoint/' } as const;

/** The largest `afterSeq` a client may resume from (2^50): seqs stay exact integers far past it. */
export const MAX_AFTER_SEQ = 2 ** 50;

/** How many of the newest requests an endpoint keeps when the server does not say (`maxRequests`). */
export const DEFAULT_MAX_REQUESTS = 50;

/** The largest frame a client may send: a `local-answer` carries up to 1 MiB of body, base64-encoded. */
export const MAX_WS_MESSAGE_BYTES = 1536 * 1024;

/** The most of a local app's body relayed to its sender (`local-answer`): the CLI checks it before sending, the server again. */
export const MAX_LOCAL_ANSWER_BODY_BYTES = 1024 * 1024;

/** WebSocket close codes the server uses (4000-4999 are ours, RFC 6455 section 7.4.2). */
export const CloseCode = {
  /** Server shutting down: reconnect to another instance or later. */
  GOING_AWAY: 1001,
  /** Subprotocol missing or not `hookwatch.v1`. */
  PROTOCOL_ERROR: 1002,
  /** The store is unreachable: reconnect with backoff (RFC 6455 section 7.4.1 "try again later"). */
  TRY_AGAIN_LATER: 1013,
  /** A run of malformed messages (policy violation). */
  POLICY_VIOLATION: 1008,
  /** More messages a second than LIVE_MESSAGES_PER_SECOND allows, or more kept endpoints than KEPT_CREATES_PER_ADDRESS. */
  TOO_MANY_MESSAGES: 4029,
  /** The endpoint does not exist, expired, or the key is wrong. */
  ENDPOINT_NOT_FOUND: 4004,
  /** No create/join within the hello timeout. */
  HELLO_TIMEOUT: 4000,
  /** Capacity: too many endpoints or watchers. */
  AT_CAPACITY: 4503,
  /** ACCESS_MODE=token: no valid `token` in create/join, or the socket's token was withdrawn (checked at each heartbeat). */
  UNAUTHORIZED: 4401,
} as const;

// ---- client -> server ----

/** Make a new endpoint and watch it: `live` (the default) lives while watched, `kept` for KEPT_TTL_MS. */
export interface CreateMessage {
  /** Kept endpoints only: how long it lives (at most KEPT_MAX_TTL_MS), its name (its id), and whether secrets are redacted. */
  ttlMs?: number;
  name?: string;
  redact?: boolean;
  type: 'create';
  kind?: 'live' | 'kept';
  /** ACCESS_MODE=token: the access token (never sent in the socket's URL). */
  token?: string;
}

/**
 * Watch an existing endpoint. With `afterSeq`, only requests after it are replayed (resume).
 * `key` may be left out only by the endpoint's signed-in creator (ACCESS_MODE token or proxy).
 */
export interface JoinMessage {
  type: 'join';
  endpointId: string;
  key?: string;
  afterSeq?: number;
  /** ACCESS_MODE=token: the access token (never sent in the socket's URL). */
  token?: string;
}

export interface SetResponseMessage {
  type: 'set-response';
  response: ResponseConfig;
}

export interface ClearMessage {
  type: 'clear';
}

/**
 * What a forwarder (the `hookwatch forward` CLI) got from its target for one request, passed on
 * to every tab watching the endpoint. Only a socket that joined with the key may send it.
 */
export interface ForwardedMessage {
  type: 'forwarded';
  /** The captured request it answers. */
  seq: number;
  /** Where it went, as the forwarder names it (e.g. `http://localhost:3000/hook`). */
  target: string;
  /** The target's status; absent when the forward failed (see `error`). */
  status?: number;
  error?: string;
  durationMs: number;
  /** The answer's headers, in order (at most 64). */
  headers: Array<[string, string]>;
  /** The first 4 KiB of the answer's body: UTF-8 text, or base64 when not valid UTF-8. */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  bodyTruncated: boolean;
}

/**
 * `hookwatch forward --respond`: this socket (joined with the key) becomes the endpoint's
 * responder: senders wait for its `local-answer` (up to RESPOND_TIMEOUT_MS) and get it. The
 * latest claim wins; every watcher hears `responder`.
 */
export interface ClaimResponderMessage {
  type: 'claim-responder';
}

/** The responder's local app answered request `seq`: relayed to its sender when it still waits. */
export interface LocalAnswerMessage {
  type: 'local-answer';
  seq: number;
  /** 200-599. */
  status: number;
  headers: Array<[string, string]>;
  /** The whole body, at most 1 MiB once decoded. */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
}

/** `hookwatch forward`: this socket (joined with the key) sends page replays to its target. */
export interface AnnounceForwarderMessage {
  type: 'announce-forwarder';
  /** Where it forwards, as it names it (e.g. `http://localhost:3000/hook`). */
  target: string;
}

/** A request as the page edited it for *Edit and replay*: what goes out instead of the stored one. */
export interface EditedRequest {
  method: string;
  /** Sub-path and query under the receiver URL, e.g. `/github/push?x=1` (`/` for the bare URL). */
  path: string;
  headers: Array<[string, string]>;
  /** At most the endpoint's stored body cap once decoded. */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
}

/**
 * A tab asks the endpoint's forwarders to send stored request `seq` again (as stored, or as
 * `edited`); `id` (1-64 of A-Z a-z 0-9 _ -) is the tab's own, echoed in `replay-started` and
 * `replay-result`. Only that tab hears about it.
 */
export interface ReplayMessage {
  type: 'replay';
  id: string;
  seq: number;
  edited?: EditedRequest;
}

/** A forwarder took replay `id` and is sending it to `target` (forwarder → server → the asking tab). */
export interface ReplayStartedMessage {
  type: 'replay-started';
  id: string;
  seq: number;
  target: string;
}

/**
 * How replay `id` went: the target's answer, in the `forwarded` message's shape and limits, or
 * `error` (not delivered, or no forwarder took it).
 */
export interface ReplayResultMessage extends Omit<ForwardedMessage, 'type'> {
  type: 'replay-result';
  id: string;
}

export type ClientMessage =
  | CreateMessage
  | JoinMessage
  | SetResponseMessage
  | ClearMessage
  | ForwardedMessage
  | ClaimResponderMessage
  | LocalAnswerMessage
  | AnnounceForwarderMessage
  | ReplayMessage
  | ReplayStartedMessage
  | ReplayResultMessage;

// ---- server -> client ----

/** An endpoint as its owner sees it: in `welcome`, and from `POST /api/endpoints`. */
export interface EndpointInfo {
  id: string;
  /** The receiver URL senders use. */
  url: string;
  /** The secret watch key. Sent only to a socket that created or joined with it, or to its creator over HTTP. */
  key: string;
  /** `live`: lives while watched, plus `graceSeconds`. `kept`: lives until `expiresAt`. */
  kind: 'live' | 'kept';
  createdAt: string;
  /** Kept endpoints: when it expires (ISO 8601 UTC). */
  expiresAt?: string;
  response: ResponseConfig;
  /** Seconds a live endpoint outlives its last watcher. */
  graceSeconds: number;
  /** How many of the newest requests the endpoint keeps. */
  maxRequests: number;
  /**
   * `maxRequests` under its old name ("kept" names an endpoint kind), sent alongside it for one
   * release so older pages and CLIs keep working; read `maxRequests`.
   * @deprecated
   */
  requestsKept?: number;
  /** Bytes of each request's body it keeps (the rest is counted, and the request flagged truncated). */
  maxBodyBytes: number;
  /** Kept endpoints: whether secret header and query values are stored redacted (false: as received, by the creator's choice). */
  redact?: boolean;
  /** The responder (`hookwatch forward --respond`) answering its senders now, when one does (as in the `responder` message). */
  responder?: string;
}

/** `GET /api/endpoints`: a signed-in user's own living endpoints (never their keys: the creator opens them without one). */
export interface OwnEndpointsAnswer {
  user: string;
  endpoints: Array<Omit<EndpointInfo, 'key'>>;
}

/** `GET /api/access`: how this instance decides who may create and watch, and who the caller is (null: not signed in). */
export interface AccessAnswer {
  mode: 'open' | 'token' | 'proxy';
  user: string | null;
}

/**
 * First message after a successful create/join. `backlog` request messages follow (oldest
 * first), then live ones. A client drops any request it holds with `seq <= clearedSeq`.
 * `gap` is true when requests after `afterSeq` were already dropped (the per-endpoint count or
 * a byte budget). `lastSeq` is the highest seq the endpoint has given, so a client can count
 * what it missed: received = lastSeq − clearedSeq.
 */
export interface WelcomeMessage {
  type: 'welcome';
  endpoint: EndpointInfo;
  created: boolean;
  backlog: number;
  clearedSeq: number;
  lastSeq: number;
  gap: boolean;
}

export interface RequestMessage {
  type: 'request';
  request: CapturedRequest;
}

export interface ResponseChangedMessage {
  type: 'response';
  response: ResponseConfig;
}

export interface ClearedMessage {
  type: 'cleared';
  clearedSeq: number;
}

/** Request `seq` was deleted by its endpoint's owner (`DELETE /api/endpoints/<id>/requests/<seq>`): drop it. */
export interface RemovedMessage {
  type: 'removed';
  seq: number;
}

/** A kept endpoint's lifetime was extended (`POST /api/endpoints/<id>/extend`): it now expires at `expiresAt`. */
export interface ExtendedMessage {
  type: 'extended';
  expiresAt: string;
}

/** The endpoint is gone: its lifetime ended (`expired`), or its owner deleted it (`deleted`). */
export interface ExpiredMessage {
  type: 'expired';
  reason: 'expired' | 'deleted';
}

/** How many sockets (tabs, CLIs) watch the endpoint now, on every instance; sent when it changes. */
export interface WatchersMessage {
  type: 'watchers';
  count: number;
}

/**
 * Requests up to and including `throughSeq` are no longer stored: the stored-bytes budget
 * evicted them (the oldest go first). A client may keep showing what it holds, marked as gone.
 */
export interface EvictedMessage {
  type: 'evicted';
  throughSeq: number;
}

/**
 * Who answers senders: `id` names the responder (a `hookwatch forward --respond`) now holding the
 * endpoint, null when none does. Sent to every watcher when it changes; a responder whose `id`
 * is no longer the one it was given has been replaced.
 */
export interface ResponderMessage {
  type: 'responder';
  id: string | null;
  /** Only to the socket that claimed: the id is its own. */
  you?: boolean;
}

/** Request `seq`'s sender got its local app's answer: the record's `answer` is now this. */
export interface AnsweredMessage {
  type: 'answered';
  seq: number;
  answer: RecordedAnswer;
}

/**
 * To forwarders only: send `request` (the stored record, or the page's edited copy of it) to
 * your target, as forward would, and answer with `replay-started` and `replay-result` under this `id`.
 */
export interface ReplayOrderMessage {
  type: 'replay';
  id: string;
  seq: number;
  request: CapturedRequest;
}

export interface ErrorMessage {
  type: 'error';
  error: { code: string; message: string };
  /** The `type` of the client message that caused it, when there was one. */
  for?: string;
}

export type ServerMessage =
  | WelcomeMessage
  | RequestMessage
  | ResponseChangedMessage
  | ClearedMessage
  | RemovedMessage
  | ExtendedMessage
  | ExpiredMessage
  | EvictedMessage
  | WatchersMessage
  | ForwardedMessage
  | ResponderMessage
  | AnsweredMessage
  | ReplayOrderMessage
  | ReplayStartedMessage
  | ReplayResultMessage
  | ErrorMessage;

// ---- messages the stores write around stored bytes ----

/**
 * Every `request` message starts with this, then its seq, then the rest of its record: the
 * stores build it around a stored record without parsing it (store.ts, and the Redis scripts).
 */
export const REQUEST_MESSAGE_HEAD = '{"type":"request","request":{"seq":';
/** The `evicted` message up to its number, for the Redis scripts; elsewhere `evictedMessage`. */
export const EVICTED_MESSAGE_HEAD = '{"type":"evicted","throughSeq":';
export const evictedMessage = (throughSeq: number): string => `${EVICTED_MESSAGE_HEAD}${throughSeq}}`;
