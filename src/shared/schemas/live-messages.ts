/**
 * The messages of the live protocol, version 1 (docs/protocol.md; its constants are in
 * protocol.ts). What a client sends is validated with these schemas (socket/client-messages.ts);
 * what the server sends is built by server-messages.ts with the types they give. The page
 * imports the types only, so zod stays out of its bundle.
 */
import { z } from 'zod';
import { MAX_AFTER_SEQ } from '../protocol.js';
import { capturedRequestSchema, recordedAnswerSchema } from './captured-request.js';
import { endpointInfoSchema } from './endpoint-info.js';
import { bodyEncoding, headerPairs } from './fields.js';
import { responseConfigSchema } from './response-config.js';

/** Longer than any token (16-512 characters); a wrong one is refused by the same check as an unknown one. */
const ACCESS_TOKEN = z.string().max(1024);

/** RFC 9110 tokens: what a method and a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value node:http will send: no line breaks or NUL, which would split the message. */
const HEADER_VALUE = /^[^\r\n\0]*$/;
/** A path and query as sent on a request line: from `/`, no spaces or control characters. */
const REQUEST_PATH = /^\/[\x21-\x7e]*$/;
/** A tab's replay id; a forwarder answers under the server's relay id (`<watcher>.<tab's id>`). */
const REPLAY_ID = /^[A-Za-z0-9_-]{1,64}$/;
const RELAY_ID = /^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}$/;

const seq = z.number().int().min(1);

/** The fields of an answer as a forwarder reports it (`forwarded`, `replay-result`), with the page's limits. */
const reportedAnswer = {
  seq: seq.describe('The captured request it answers.'),
  target: z.string().max(512).describe('Where it went, as the forwarder names it (e.g. `http://localhost:3000/hook`).'),
  status: z
    .number()
    .int()
    .min(100)
    .max(599)
    .describe("The target's status; absent when the forward failed (see `error`).")
    .optional(),
  error: z.string().max(500).describe('Why the forward failed.').optional(),
  durationMs: z
    .number()
    .min(0)
    .max(24 * 60 * 60 * 1000)
    .describe('How long it took.'),
  headers: headerPairs(256, 2048, 64).describe("The answer's headers, in order."),
  body: z
    .string()
    .max(8192)
    .describe("The first 4 KiB of the answer's body: UTF-8 text, or base64 when not valid UTF-8."),
  bodyEncoding,
  bodyTruncated: z.boolean().describe('The body was cut.'),
};

// ---- client -> server ----

/** Make a new endpoint and watch it: `live` (the default) lives while watched, `kept` for KEPT_TTL_MS. */
export const createMessageSchema = z.strictObject({
  type: z.literal('create'),
  // The choices themselves are validated by the endpoint service, as for POST /api/endpoints.
  kind: z.enum(['live', 'kept']).optional(),
  ttlMs: z.number().optional(),
  name: z.string().max(200).optional(),
  redact: z.boolean().optional(),
  /** ACCESS_MODE=token: the access token (never sent in the socket's URL). */
  token: ACCESS_TOKEN.optional(),
});
export type CreateMessage = z.infer<typeof createMessageSchema>;

/**
 * Watch an existing endpoint. With `afterSeq`, only requests after it are replayed (resume).
 * `key` may be left out only by the endpoint's signed-in creator (ACCESS_MODE token or proxy).
 */
export const joinMessageSchema = z.strictObject({
  type: z.literal('join'),
  endpointId: z.string().min(1).max(64),
  key: z.string().min(1).max(128).optional(),
  token: ACCESS_TOKEN.optional(),
  // Far past any real count, below where numbers stop being exact (a resume past the last seq moves the numbering there).
  afterSeq: z.number().int().min(0).max(MAX_AFTER_SEQ).optional(),
});
export type JoinMessage = z.infer<typeof joinMessageSchema>;

export const setResponseMessageSchema = z.strictObject({
  type: z.literal('set-response'),
  response: responseConfigSchema,
});
export type SetResponseMessage = z.infer<typeof setResponseMessageSchema>;

export const clearMessageSchema = z.strictObject({ type: z.literal('clear') });
export type ClearMessage = z.infer<typeof clearMessageSchema>;

/**
 * What a forwarder (the `hookwatch forward` CLI) got from its target for one request, passed on
 * to every tab watching the endpoint. Only a socket that joined with the key may send it.
 */
export const forwardedMessageSchema = z
  .strictObject({ type: z.literal('forwarded'), ...reportedAnswer })
  .describe(
    "What a forwarder (`hookwatch forward`) got from its target for one request, as the socket's `forwarded` message (redacted as the endpoint's requests are).",
  );
export type ForwardedMessage = z.infer<typeof forwardedMessageSchema>;

/**
 * `hookwatch forward --respond`: this socket (joined with the key) becomes the endpoint's
 * responder: senders wait for its `local-answer` (up to RESPOND_TIMEOUT_MS) and get it. The
 * latest claim wins; every watcher hears `responder`.
 */
export const claimResponderMessageSchema = z.strictObject({ type: z.literal('claim-responder') });

/** The responder's local app answered request `seq`: relayed to its sender when it still waits. */
export const localAnswerMessageSchema = z.strictObject({
  type: z.literal('local-answer'),
  seq,
  status: z.number().int().min(100).max(599),
  headers: headerPairs(256, 8192, 100),
  // The whole body, at most 1 MiB once decoded; in base64, with room to say it is too large rather than fail to parse.
  body: z.string().max(1_500_000),
  bodyEncoding,
});
export type LocalAnswerMessage = z.infer<typeof localAnswerMessageSchema>;

/** `hookwatch forward`: this socket (joined with the key) sends page replays to its target. */
export const announceForwarderMessageSchema = z.strictObject({
  type: z.literal('announce-forwarder'),
  target: z.string().max(512),
});

/** A request as the page edited it for *Edit and replay*: what goes out instead of the stored one. */
export const editedRequestSchema = z.strictObject({
  method: z.string().max(32).regex(TOKEN, 'method must be an HTTP method token'),
  /** Sub-path and query under the receiver URL, e.g. `/github/push?x=1` (`/` for the bare URL). */
  path: z.string().max(8192).regex(REQUEST_PATH, 'path must start with / and hold no spaces or control characters'),
  headers: z
    .array(
      z.tuple([
        z.string().max(256).regex(TOKEN, 'a header name must be an HTTP token'),
        z.string().max(8192).regex(HEADER_VALUE, 'a header value must not hold a line break or NUL'),
      ]),
    )
    .max(100),
  // At most the endpoint's stored body cap once decoded (checked by the session); this only bounds the parse.
  body: z.string().max(1_450_000),
  bodyEncoding,
});
export type EditedRequest = z.infer<typeof editedRequestSchema>;

/**
 * A tab asks the endpoint's forwarders to send stored request `seq` again (as stored, or as
 * `edited`); `id` is the tab's own, echoed in `replay-started` and `replay-result`. Only that
 * tab hears about it.
 */
export const replayMessageSchema = z.strictObject({
  type: z.literal('replay'),
  id: z.string().regex(REPLAY_ID, 'id must be 1-64 of A-Z a-z 0-9 _ -'),
  seq,
  edited: editedRequestSchema.optional(),
});
export type ReplayMessage = z.infer<typeof replayMessageSchema>;

/**
 * A forwarder took replay `id` and is sending it to `target` (forwarder → server → the asking
 * tab). A forwarder sends it under the server's relay id, the server passes it on under the tab's.
 */
export const replayStartedMessageSchema = z.strictObject({
  type: z.literal('replay-started'),
  id: z.string().regex(RELAY_ID),
  seq,
  target: z.string().max(512),
});
export type ReplayStartedMessage = z.infer<typeof replayStartedMessageSchema>;

/**
 * How replay `id` went: the target's answer, in the `forwarded` message's shape and limits, or
 * `error` (not delivered, or no forwarder took it). Its id as for `replay-started`.
 */
export const replayResultMessageSchema = z.strictObject({
  type: z.literal('replay-result'),
  id: z.string().regex(RELAY_ID),
  ...reportedAnswer,
});
export type ReplayResultMessage = z.infer<typeof replayResultMessageSchema>;

/** Every message but `set-response`, whose configuration is read apart (see `clientFrameSchema`). */
const otherClientMessages = [
  createMessageSchema,
  joinMessageSchema,
  clearMessageSchema,
  forwardedMessageSchema,
  claimResponderMessageSchema,
  localAnswerMessageSchema,
  announceForwarderMessageSchema,
  replayMessageSchema,
  replayStartedMessageSchema,
  replayResultMessageSchema,
] as const;

export const clientMessageSchema = z.discriminatedUnion('type', [setResponseMessageSchema, ...otherClientMessages]);
export type ClientMessage = z.infer<typeof clientMessageSchema>;

/**
 * A client's frame as the socket first reads it: a `set-response` configuration is checked
 * after, by parseResponseConfig, for an error naming each bad field.
 */
export const clientFrameSchema = z.discriminatedUnion('type', [
  setResponseMessageSchema.extend({ response: z.unknown() }),
  ...otherClientMessages,
]);

// ---- server -> client ----

/**
 * First message after a successful create/join. `backlog` request messages follow (oldest
 * first), then live ones. A client drops any request it holds with `seq <= clearedSeq`.
 * `gap` is true when requests after `afterSeq` were already dropped (the per-endpoint count or
 * a byte budget). `lastSeq` is the highest seq the endpoint has given, so a client can count
 * what it missed: received = lastSeq − clearedSeq.
 */
export const welcomeMessageSchema = z.strictObject({
  type: z.literal('welcome'),
  endpoint: endpointInfoSchema,
  created: z.boolean(),
  backlog: z.number().int().min(0),
  clearedSeq: z.number().int().min(0),
  lastSeq: z.number().int().min(0),
  gap: z.boolean(),
});
export type WelcomeMessage = z.infer<typeof welcomeMessageSchema>;

export const requestMessageSchema = z.strictObject({ type: z.literal('request'), request: capturedRequestSchema });
export const responseChangedMessageSchema = z.strictObject({
  type: z.literal('response'),
  response: responseConfigSchema,
});
export type ResponseChangedMessage = z.infer<typeof responseChangedMessageSchema>;
export const clearedMessageSchema = z.strictObject({ type: z.literal('cleared'), clearedSeq: z.number().int().min(0) });

/** Request `seq` was deleted by its endpoint's owner (`DELETE /api/endpoints/<id>/requests/<seq>`): drop it. */
export const removedMessageSchema = z.strictObject({ type: z.literal('removed'), seq });

/** A kept endpoint's lifetime was extended (`POST /api/endpoints/<id>/extend`): it now expires at `expiresAt`. */
export const extendedMessageSchema = z.strictObject({ type: z.literal('extended'), expiresAt: z.string() });
export type ExtendedMessage = z.infer<typeof extendedMessageSchema>;

/** The endpoint is gone: its lifetime ended (`expired`), or its owner deleted it (`deleted`). */
export const expiredMessageSchema = z.strictObject({
  type: z.literal('expired'),
  reason: z.enum(['expired', 'deleted']),
});
export type ExpiredMessage = z.infer<typeof expiredMessageSchema>;

/** How many sockets (tabs, CLIs) watch the endpoint now, on every instance; sent when it changes. */
export const watchersMessageSchema = z.strictObject({ type: z.literal('watchers'), count: z.number().int().min(0) });
export type WatchersMessage = z.infer<typeof watchersMessageSchema>;

/**
 * Requests up to and including `throughSeq` are no longer stored: the stored-bytes budget
 * evicted them (the oldest go first). A client may keep showing what it holds, marked as gone.
 */
export const evictedMessageSchema = z.strictObject({ type: z.literal('evicted'), throughSeq: z.number().int().min(0) });

/**
 * Who answers senders: `id` names the responder (a `hookwatch forward --respond`) now holding the
 * endpoint, null when none does. Sent to every watcher when it changes; a responder whose `id`
 * is no longer the one it was given has been replaced. `you`: only to the socket that claimed,
 * the id is its own.
 */
export const responderMessageSchema = z.strictObject({
  type: z.literal('responder'),
  id: z.string().nullable(),
  you: z.boolean().optional(),
});
export type ResponderMessage = z.infer<typeof responderMessageSchema>;

/** Request `seq`'s sender got its local app's answer: the record's `answer` is now this. */
export const answeredMessageSchema = z.strictObject({ type: z.literal('answered'), seq, answer: recordedAnswerSchema });

/**
 * To forwarders only: send `request` (the stored record, or the page's edited copy of it) to
 * your target, as forward would, and answer with `replay-started` and `replay-result` under this `id`.
 */
export const replayOrderMessageSchema = z.strictObject({
  type: z.literal('replay'),
  id: z.string(),
  seq,
  request: capturedRequestSchema,
});
export type ReplayOrderMessage = z.infer<typeof replayOrderMessageSchema>;

/** `for`: the `type` of the client message that caused it, when there was one. */
export const errorMessageSchema = z.strictObject({
  type: z.literal('error'),
  error: z.strictObject({ code: z.string(), message: z.string() }),
  for: z.string().optional(),
});
export type ErrorMessage = z.infer<typeof errorMessageSchema>;

/** Built by the server (server-messages.ts), never parsed there: a union of types only. */
export type ServerMessage =
  | z.infer<typeof welcomeMessageSchema>
  | z.infer<typeof requestMessageSchema>
  | z.infer<typeof responseChangedMessageSchema>
  | z.infer<typeof clearedMessageSchema>
  | z.infer<typeof removedMessageSchema>
  | z.infer<typeof extendedMessageSchema>
  | z.infer<typeof expiredMessageSchema>
  | z.infer<typeof evictedMessageSchema>
  | z.infer<typeof watchersMessageSchema>
  | z.infer<typeof forwardedMessageSchema>
  | z.infer<typeof responderMessageSchema>
  | z.infer<typeof answeredMessageSchema>
  | z.infer<typeof replayOrderMessageSchema>
  | z.infer<typeof replayStartedMessageSchema>
  | z.infer<typeof replayResultMessageSchema>
  | z.infer<typeof errorMessageSchema>;
