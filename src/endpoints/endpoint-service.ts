import type { FastifyError } from 'fastify';
import type { z } from 'zod';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { hasGap } from '../log/rulebook.js';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import type {
  ForwardedMessage,
  LocalAnswerMessage,
  ReplayOrderMessage,
  ReplayResultMessage,
  ReplayStartedMessage,
} from '../shared/protocol.js';
import { createEndpointSchema, extendEndpointSchema, ttlMsSchema } from '../shared/schemas/endpoints-api.js';
import { parseResponseConfig, type ResponseConfig } from '../shared/schemas/response-config.js';
import { forwardedMessage } from '../shared/server-messages.js';
import {
  MAX_FORWARDED_BYTES,
  redactsSecrets,
  type EndpointRecord,
  type RequestLog,
  type Store,
} from '../store/store.js';
import { createEndpoint, keyMatches, type CreateOptions } from './endpoint-records.js';
import { toRelayed } from './relayed-answer.js';
import { redactForwarded } from './redact-forwarded.js';
import { capturedRequestOf } from '../store/stored-request.js';

/** What an action gives: its value, or the error (from the errors table) a transport turns into a status or a close code. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: FastifyError };

const done = <T>(value: T): Outcome<T> => ({ ok: true, value });
const refused = (error: FastifyError): Outcome<never> => ({ ok: false, error });
const notFound = () => refused(errors.ENDPOINT_NOT_FOUND());

/** An endpoint's log since a seq, with whether requests after that seq were lost (evicted or cleared). */
export interface LogSince {
  log: RequestLog;
  gap: boolean;
}

/**
 * Every action on an endpoint, the one way the HTTP API and the live socket both take. State
 * changes are announced to every watcher by the store, in the same step as the change
 * (store.ts), so an announcement is never lost or overtaken; what is not stored, a forwarder's
 * report, is announced here.
 */
export interface EndpointService {
  /**
   * A new endpoint and its watch key, from the creator's untrusted choices (`{kind, ttlMs, name,
   * redact}`): INVALID_REQUEST naming what is wrong, NAME_TAKEN, or AT_CAPACITY when its kind's
   * cap is reached. A signed-in `creator` (token or proxy mode) is recorded with the endpoint,
   * and holds at most MAX_KEPT_PER_USER kept ones (TOO_MANY_KEPT).
   */
  create(
    input: unknown,
    creator?: string,
    addressKey?: string,
  ): Promise<Outcome<{ endpoint: EndpointRecord; key: string }>>;
  /** A kept endpoint lives `ttlMs` from now (at most KEPT_MAX_TTL_MS): the endpoint as it is now. */
  extend(endpoint: EndpointRecord, input: unknown): Promise<Outcome<EndpointRecord>>;
  /**
   * The endpoint when `key` is its watch key, or when the signed-in `user` created it (so its
   * creator may open it from any browser, without the key); ENDPOINT_NOT_FOUND otherwise, the
   * same for a wrong key as for no endpoint.
   */
  authorize(id: string, key: string | undefined, user?: string): Promise<Outcome<EndpointRecord>>;
  /** The living endpoints `user` created, oldest first (at most MAX_LISTED_ENDPOINTS). */
  listOwn(user: string): Promise<EndpointRecord[]>;
  /** Validates and sets the response configuration: INVALID_RESPONSE_CONFIG naming each bad field, AT_CAPACITY, or ENDPOINT_NOT_FOUND. */
  setResponse(id: string, input: unknown): Promise<Outcome<ResponseConfig>>;
  /** Deletes the stored requests; the new clearedSeq. */
  clear(id: string): Promise<Outcome<number>>;
  /** Deletes stored request `seq`: REQUEST_NOT_FOUND when it is not stored, ENDPOINT_NOT_FOUND when the endpoint is gone. */
  deleteRequest(id: string, seq: number): Promise<Outcome<undefined>>;
  /** Deletes the endpoint: its watchers everywhere are told and closed. `user`: who asked, for the log. */
  remove(id: string, user?: string): Promise<Outcome<void>>;
  /**
   * The stored requests after `afterSeq`, and whether some after it are no longer stored. A read
   * changes nothing: an `afterSeq` past the endpoint's last seq (a client that saw writes the
   * store lost, or a made-up number) gets no requests and the endpoint's real `lastSeq`, from
   * which it resumes. Numbering never goes back over what was handed out: that guard is where
   * numbers are given (store.ts, appendRequest), not in a read.
   */
  readSince(id: string, afterSeq: number): Promise<Outcome<LogSince>>;
  /** Passes a forwarder's report to every watcher, with the endpoint's redaction applied to the local app's answer. */
  relayForwarded(endpoint: EndpointRecord, report: ForwardedMessage): Promise<void>;
  /**
   * The endpoint's responder is now `token` (claim), still is (renew), or is no more (release),
   * for RESPONDER_LEASE_MS at a time: false when the endpoint is gone or `token` no longer holds it.
   */
  setResponder(endpointId: string, token: string, action: 'claim' | 'renew' | 'release'): Promise<boolean>;
  /**
   * Passes a responder's local answer to the sender of request `seq`, on whichever instance it
   * waits (nothing happens when none does any more); BAD_MESSAGE for an answer that cannot be
   * relayed, whose sender then gets the configured answer at once, or from a responder (`token`)
   * a later claim has replaced.
   */
  relayLocalAnswer(endpointId: string, token: string, message: LocalAnswerMessage): Promise<Outcome<void>>;
  /** Stored request `seq` as its record, or undefined when it is not stored (any more). */
  readRequest(endpointId: string, seq: number): Promise<CapturedRequest | undefined>;
  /** Passes a page's replay order to the endpoint's forwarders, on every instance; nobody else gets it. */
  orderReplay(endpointId: string, order: ReplayOrderMessage): Promise<void>;
  /**
   * Passes a forwarder's word on a replay to the tab that asked (watcher `watcherId`, on whichever
   * instance), under the tab's own replay id. Not stored: a replay is never a capture.
   */
  relayReplayProgress(
    endpointId: string,
    watcherId: string,
    message: ReplayStartedMessage | ReplayResultMessage,
  ): Promise<void>;
}

/**
 * How long a responder's claim lasts unless renewed: its session renews it every third of this,
 * so a claim whose instance died lapses, and senders stop waiting for it, within this time.
 */
export const RESPONDER_LEASE_MS = 30_000;

/** Published for a sender whose local answer cannot be relayed: it gets the configured answer now. */
export const NO_LOCAL_ANSWER = '';

/** Told of every creation and deletion, for the log and the metrics: who (never a key, a token or a body). */
export type EndpointAudit = (
  event: 'created' | 'deleted',
  endpoint: Pick<EndpointRecord, 'id' | 'kind'>,
  user: string | undefined,
) => void;

/** The settings the service applies: lifetimes and options, and the caps on creating. */
export type EndpointServiceSettings = Pick<Config, 'endpoints' | 'clientLimits' | 'processLimits'>;

export function createEndpointService(options: {
  store: Store;
  bus: Bus;
  config: EndpointServiceSettings;
  audit?: EndpointAudit;
}): EndpointService {
  const { store, bus, config } = options;
  const audit = options.audit ?? (() => undefined);
  const redactAlso = new Set(config.endpoints.redactHeaders);
  // Built once: their limits come from the configuration, which does not change.
  const createSchema = createSchemaFor(config.endpoints);
  const extendSchema = extendEndpointSchema.extend({ ttlMs: ttlMsFor(config.endpoints) });
  const forwardedKept = createPerSecond(FORWARDED_KEPT_PER_SECOND);

  return {
    async create(input, creator, addressKey) {
      const options = parseCreate(input, createSchema, config.endpoints);
      if (typeof options === 'string') return refused(errors.INVALID_REQUEST(options));
      // A kept endpoint is held by its signed-in creator, else by the address that made it; each
      // holds a bounded number (an address recorded as an owner no user name can equal).
      const owner =
        creator ?? (options.kind === 'kept' && addressKey !== undefined ? addressOwner(addressKey) : undefined);
      const cap =
        creator === undefined
          ? { max: config.clientLimits.maxKeptPerAddress, setting: 'MAX_KEPT_PER_ADDRESS' }
          : { max: config.clientLimits.maxKeptPerUser, setting: 'MAX_KEPT_PER_USER' };
      // Counted before creating, so two creations at the same moment may pass the cap by one.
      if (
        owner !== undefined &&
        options.kind === 'kept' &&
        (await store.listEndpoints(owner)).filter((endpoint) => endpoint.kind === 'kept').length >= cap.max
      ) {
        return refused(errors.TOO_MANY_KEPT(cap.max, cap.setting));
      }
      const created = await createEndpoint(store, config, {
        ...options,
        ...(owner === undefined ? {} : { creator: owner }),
      });
      if (created === 'taken') return refused(errors.NAME_TAKEN(options.name ?? ''));
      if (created !== 'full') {
        audit('created', created.endpoint, creator);
        return done(created);
      }
      return refused(
        errors.AT_CAPACITY(
          options.kind === 'kept'
            ? `${config.processLimits.maxKeptEndpoints} kept endpoints`
            : `${config.processLimits.maxEndpoints} live endpoints`,
        ),
      );
    },

    async extend(endpoint, input) {
      if (endpoint.kind !== 'kept')
        return refused(
          errors.INVALID_REQUEST('a live endpoint lives while it is watched: only kept endpoints are extended'),
        );
      const parsed = extendSchema.safeParse(input ?? {});
      if (!parsed.success) return refused(errors.INVALID_REQUEST(problemsOf(parsed.error)));
      const extended = await store.extendEndpoint(endpoint.id, Date.now() + parsed.data.ttlMs);
      return extended ? done(extended) : notFound();
    },

    async authorize(id, key, user) {
      const endpoint = await store.getEndpoint(id);
      if (!endpoint) return notFound();
      if (key !== undefined && keyMatches(key, endpoint.keyHash)) return done(endpoint);
      return user !== undefined && endpoint.creator === user ? done(endpoint) : notFound();
    },

    listOwn: (user) => store.listEndpoints(user),

    async setResponse(id, input) {
      const parsed = parseResponseConfig(input);
      if (!parsed.ok) return refused(errors.INVALID_RESPONSE_CONFIG(parsed.message));
      const set = await store.setResponse(id, parsed.value);
      if (set === undefined) return notFound();
      if (set === 'full')
        return refused(
          errors.AT_CAPACITY(
            `response configurations use all of MAX_RESPONSE_CONFIG_BYTES (${config.processLimits.maxResponseConfigBytes} bytes)`,
          ),
        );
      return done(parsed.value);
    },

    async clear(id) {
      const clearedSeq = await store.clearRequests(id);
      return clearedSeq === undefined ? notFound() : done(clearedSeq);
    },

    async deleteRequest(id, seq) {
      const removed = await store.deleteRequest(id, seq);
      if (removed === undefined) return notFound();
      return removed ? done(undefined) : refused(errors.REQUEST_NOT_FOUND(seq));
    },

    async remove(id, user) {
      const endpoint = await store.getEndpoint(id);
      if (!endpoint || !(await store.deleteEndpoint(id))) return notFound();
      audit('deleted', endpoint, user);
      return done(undefined);
    },

    async readSince(id, afterSeq) {
      const log = await store.readLog(id, afterSeq);
      if (!log) return notFound();
      return done({
        log,
        gap: hasGap(afterSeq, { firstSeq: log.requests[0]?.seq, lastSeq: log.lastSeq, clearedSeq: log.clearedSeq }),
      });
    },

    async relayForwarded(endpoint, report) {
      // An endpoint that stores secrets redacted shows the local app's answer the same way.
      const shown = fittedForwarded(redactsSecrets(endpoint) ? redactForwarded(report, redactAlso) : report);
      // Kept with its request, so a tab that joins later sees it too; a request no longer stored,
      // or an endpoint whose results change faster than FORWARDED_KEPT_PER_SECOND, still has its
      // result shown to the tabs watching now.
      const keep = forwardedKept.take(endpoint.id);
      if (!keep || !(await store.setForwarded(endpoint.id, report.seq, shown)))
        await bus.publish(endpoint.id, { data: shown });
    },

    setResponder: (endpointId, token, action) =>
      store.setResponder(endpointId, token, Date.now() + RESPONDER_LEASE_MS, action),

    async relayLocalAnswer(endpointId, token, message) {
      // The latest claim wins: a responder replaced since is not relayed (the sender waits for the one now holding).
      const endpoint = await store.getEndpoint(endpointId);
      if (endpoint?.responder !== token)
        return refused(errors.BAD_MESSAGE("another hookwatch forward --respond answers this endpoint's senders now"));
      const relayed = toRelayed(message);
      const data = relayed.ok ? JSON.stringify(relayed.value) : NO_LOCAL_ANSWER;
      await bus.publish(endpointId, { answerFor: message.seq, data });
      return relayed.ok
        ? done(undefined)
        : refused(errors.BAD_MESSAGE(`local-answer for request ${message.seq}: ${relayed.problem}`));
    },

    async readRequest(endpointId, seq) {
      const stored = (await store.readLog(endpointId, seq - 1))?.requests.find((request) => request.seq === seq);
      return stored === undefined ? undefined : capturedRequestOf(stored);
    },

    orderReplay: (endpointId, order) => bus.publish(endpointId, { data: JSON.stringify(order), toForwarders: true }),

    relayReplayProgress: (endpointId, watcherId, message) =>
      bus.publish(endpointId, { data: JSON.stringify(message), toWatcher: watcherId }),
  };
}

/**
 * The owner recorded for a kept endpoint made without a signed-in user: its client address,
 * behind a NUL no user name (an HTTP header value or a token's name) can hold, so an address
 * is never taken for a user when endpoints are listed or opened by their creator.
 */
export const addressOwner = (addressKey: string): string => `\u0000address:${addressKey}`;

/**
 * Forward results stored per endpoint per second, on this instance: each replaces its request's
 * last one on disk or in Redis, so a watcher sending them as fast as its socket allows would
 * rewrite stored bytes that fast. Past it a result is shown to the tabs watching, not kept.
 */
export const FORWARDED_KEPT_PER_SECOND = 20;

/** A count per key per wall-clock second; at most MAX_KEYS keys are remembered at once. */
function createPerSecond(max: number): { take(key: string): boolean } {
  const MAX_KEYS = 10_000;
  let second = 0;
  let counts = new Map<string, number>();
  return {
    take(key) {
      const now = Math.floor(Date.now() / 1000);
      if (now !== second || counts.size >= MAX_KEYS) {
        second = now;
        counts = new Map();
      }
      const used = counts.get(key) ?? 0;
      counts.set(key, used + 1);
      return used < max;
    },
  };
}

/**
 * A forwarder's report as shown and kept, at most MAX_FORWARDED_BYTES as JSON: the local app's
 * headers after those that do not fit are left out, then its body is cut, and the report says
 * the body was cut. Escaping can make a report of 8 KiB of body and 64 headers nearly a megabyte.
 */
export function fittedForwarded(report: ForwardedMessage): string {
  let shown = forwardedMessage(report);
  if (Buffer.byteLength(shown) <= MAX_FORWARDED_BYTES) return shown;
  const fitted: ForwardedMessage = { ...report, headers: [], body: '', bodyTruncated: true };
  let room = MAX_FORWARDED_BYTES - Buffer.byteLength(forwardedMessage(fitted));
  for (const header of report.headers) {
    const cost = Buffer.byteLength(JSON.stringify(header)) + 1;
    if (cost > room) break;
    fitted.headers.push(header);
    room -= cost;
  }
  // A body is cut by halves until its escaped form fits: never mid-escape, never mid-character of base64.
  let body = report.body;
  while (body.length > 0 && Buffer.byteLength(JSON.stringify(body)) - 2 > room)
    body = body.slice(
      0,
      report.bodyEncoding === 'base64' ? Math.floor(body.length / 8) * 4 : Math.floor(body.length / 2),
    );
  fitted.body = body;
  shown = forwardedMessage(fitted);
  return shown;
}

/**
 * Names no one may take: they could pass for a page of this service, or for a provider's own
 * endpoint (a sender, a teammate or a phishing page would trust `…/webhook-endpoint/stripe`).
 * A name that only starts with one (`stripe-dev`) is fine: it says whose it is.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'hookwatch',
  'admin',
  'administrator',
  'root',
  'api',
  'www',
  'app',
  'login',
  'signin',
  'signup',
  'account',
  'accounts',
  'auth',
  'oauth',
  'sso',
  'security',
  'support',
  'help',
  'status',
  'official',
  'system',
  'internal',
  'staff',
  'healthz',
  'readyz',
  'metrics',
  'openapi',
  'webhook',
  'webhooks',
  'hook',
  'hooks',
  'callback',
  'callbacks',
  'stripe',
  'github',
  'gitlab',
  'bitbucket',
  'slack',
  'shopify',
  'paypal',
  'twilio',
  'sendgrid',
  'mailgun',
  'svix',
  'discord',
  'twitch',
  'meta',
  'facebook',
  'instagram',
  'whatsapp',
  'google',
  'microsoft',
  'azure',
  'aws',
  'amazon',
  'apple',
  'dropbox',
  'okta',
  'asana',
  'zoom',
  'square',
  'adyen',
  'braintree',
  'coinbase',
  'hubspot',
  'salesforce',
  'zendesk',
  'jira',
  'atlassian',
  'linear',
  'notion',
  'vercel',
  'netlify',
  'cloudflare',
  'heroku',
  'docker',
]);

/** The creator's choices, with the longest lifetime this server allows. */
const createSchemaFor = (config: Config['endpoints']) =>
  createEndpointSchema.extend({ ttlMs: ttlMsFor(config).optional() });

/** A lifetime from now, at most KEPT_MAX_TTL_MS: the shared schema's bounds, and this server's setting. */
const ttlMsFor = (config: Config['endpoints']) =>
  ttlMsSchema.max(config.keptMaxTtlMs, `ttlMs must be at most ${config.keptMaxTtlMs} (KEPT_MAX_TTL_MS)`);

function problemsOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
}

/** The creator's choices, checked against the schema and what this server allows; a string says what is wrong. */
function parseCreate(
  input: unknown,
  schema: ReturnType<typeof createSchemaFor>,
  config: Config['endpoints'],
): CreateOptions | string {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) return problemsOf(parsed.error);
  const options = parsed.data;
  if (
    options.kind === 'live' &&
    (options.ttlMs !== undefined || options.name !== undefined || options.redact !== undefined)
  ) {
    return 'ttlMs, name and redact apply to kept endpoints only (a live endpoint lives while it is watched)';
  }
  if (options.name !== undefined && !config.namedEndpoints)
    return 'named endpoints are turned off on this server (NAMED_ENDPOINTS=false)';
  if (options.name !== undefined && RESERVED_NAMES.has(options.name))
    return `the name "${options.name}" is reserved: it could pass for this service's own page or a provider's official endpoint (add something of yours, such as "${options.name}-dev")`;
  if (options.redact === false && !config.allowUnredacted)
    return 'this server stores every secret redacted (ALLOW_UNREDACTED=false): leave out "redact": false';
  return options;
}
