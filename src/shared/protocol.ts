/**
 * The live protocol (docs/protocol.md): JSON text frames with a `type` field over a WebSocket at
 * `/api/live`, negotiated with the subprotocol `hookwatch.v2`, whose `request` message is one
 * binary frame instead (request-frame.ts). `hookwatch.v1`, all text, stays for one release. Its constants are
 * here; its messages are declared once, in zod, in schemas/live-messages.ts, whose types this
 * module passes on. The page imports it: nothing here depends on Node or, at run time, on zod.
 */

/** The protocol the page and the CLI speak. */
export const SUBPROTOCOL = 'hookwatch.v2';
/** Version 1 (`request` as JSON text, its body escaped or base64): still served, going in the next release. */
export const SUBPROTOCOL_V1 = 'hookwatch.v1';
/** A socket's protocol version. */
export type ProtocolVersion = 1 | 2;
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
  /** Subprotocol missing, or neither `hookwatch.v2` nor `hookwatch.v1`. */
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

// ---- the messages (schemas/live-messages.ts) ----

export type { EndpointInfo } from './schemas/endpoint-info.js';
export type {
  ClearMessage,
  ClientMessage,
  CreateMessage,
  EditedRequest,
  ErrorMessage,
  ExpiredMessage,
  ExtendedMessage,
  ForwardedMessage,
  JoinMessage,
  LocalAnswerMessage,
  ReplayMessage,
  ReplayOrderMessage,
  ReplayResultMessage,
  ReplayStartedMessage,
  ResponderMessage,
  ResponseChangedMessage,
  ServerMessage,
  SetResponseMessage,
  WatchersMessage,
  WelcomeMessage,
} from './schemas/live-messages.js';
// ---- messages the Redis scripts write ----

/** The `evicted` message up to its number, for the Redis scripts; elsewhere `evictedMessage`. */
export const EVICTED_MESSAGE_HEAD = '{"type":"evicted","throughSeq":';
export const evictedMessage = (throughSeq: number): string => `${EVICTED_MESSAGE_HEAD}${throughSeq}}`;
