import { pollRequests } from '../shared/api-client.js';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { MAX_WAIT_MS, type PollAnswer } from '../shared/schemas/endpoints-api.js';
import { compileGlob } from '../shared/glob.js';
import { backoffDelay, formatSeconds, sleep } from './backoff.js';
import { parseCommandArgs, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { describeError } from './send-request.js';
import type { ShareLink } from './share-link.js';
import { deadline } from '../shared/deadline.js';

export const WAIT_USAGE = `Usage: hookwatch wait <share-link> [filters] [--timeout 60s]

Waits for the first NEW request (captured after wait started) that passes every filter given,
prints it as one line of JSON (the captured record, as tail --json does) and exits 0. Exits 1
when none comes within the timeout, or when the endpoint is gone; 2 on a usage error.
Polls the endpoints API over HTTP (GET /api/endpoints/<id>/requests?waitMs=…): no socket.

  <share-link>          the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  --method <M>          the request's method, any case (POST, post)
  --path <glob>         the path under the receiver URL: * within one segment, ** across
                        segments, / alone for the bare receiver URL (e.g. /github/*, /stripe/**)
  --header <N>=<V>      a header N (any case) with the value V exactly; N=* for any value.
                        Repeatable: all must hold
  --json <path>=<V>     a JSON body whose value at the dotted path (items.0.id) is V, compared as
                        text (numbers and booleans by their JSON text: count=3, ok=true);
                        path=* for any value. Repeatable: all must hold
  --timeout <t>         how long to wait: 500ms, 30s, 2m, 1h, or a number of seconds (default 60s)
  -h, --help            this text`;

/** `--timeout` without one. */
const DEFAULT_TIMEOUT_MS = 60_000;
/** The longest `--timeout`: a day (timers take at most about 24.8 days anyway). */
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** How long past its waitMs a poll may take to answer before we call it lost and ask again. */
const POLL_SLACK_MS = 30_000;

/** What a request must pass, every filter given (an empty set passes everything). */
export interface WaitFilters {
  /** Upper case. */
  method?: string;
  /** The glob as given (for messages) and its compiled test. */
  path?: { glob: string; test: (subPath: string) => boolean };
  /** `value` undefined: the header only has to be present. `name` is lower case. */
  headers: Array<{ name: string; value: string | undefined }>;
  /** `value` undefined: the path only has to hold a value. */
  json: Array<{ path: string[]; value: string | undefined }>;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `30s`, `2m`, `1h`, or a bare number of seconds (`1.5`), in milliseconds. */
export function parseDuration(text: string, flag = '--timeout'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = match ? Math.round(Number(match[1]) * (UNIT_MS[match[2] ?? 's'] as number)) : Number.NaN;
  if (!(ms >= 1 && ms <= MAX_TIMEOUT_MS))
    throw new UsageError(`${flag} takes a duration from 1ms to 24h such as 500ms, 30s, 2m, 1h or 45 (seconds)`);
  return ms;
}

/** An RFC 9110 token: what a method or a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The filters from the command line; UsageError for one that cannot be understood. */
export function parseWaitFilters(options: {
  method?: string | undefined;
  path?: string | undefined;
  header?: string[] | undefined;
  json?: string[] | undefined;
}): WaitFilters {
  const filters: WaitFilters = { headers: [], json: [] };
  if (options.method !== undefined) {
    if (!TOKEN.test(options.method)) throw new UsageError('--method takes an HTTP method such as POST');
    filters.method = options.method.toUpperCase();
  }
  if (options.path !== undefined) {
    if (options.path === '')
      throw new UsageError('--path takes a glob such as /github/* (/ for the bare receiver URL)');
    filters.path = { glob: options.path, test: compileGlob(options.path) };
  }
  for (const text of options.header ?? []) {
    const [name, value] = splitPair(
      text,
      '--header',
      'NAME=VALUE (NAME=* for any value), e.g. --header X-GitHub-Event=push',
    );
    if (!TOKEN.test(name)) throw new UsageError(`--header: ${quoteStart(name)} is not a header name`);
    filters.headers.push({ name: name.toLowerCase(), value: value === '*' ? undefined : value });
  }
  for (const text of options.json ?? []) {
    const [path, value] = splitPair(
      text,
      '--json',
      'PATH=VALUE (PATH=* for any value), e.g. --json action=opened or --json items.0.id=42',
    );
    const segments = path.split('.');
    if (segments.some((segment) => segment === ''))
      throw new UsageError(
        `--json: ${quoteStart(path)} is not a dotted path such as pull_request.number or items.0.id`,
      );
    filters.json.push({ path: segments, value: value === '*' ? undefined : value });
  }
  return filters;
}

/**
 * `NAME=VALUE` split at the first `=`. A mistake is quoted only up to its first `:` or space:
 * `--header 'Authorization: Bearer …'` must not put the token on the terminal.
 */
function splitPair(text: string, flag: string, expected: string): [string, string] {
  const equals = text.indexOf('=');
  if (equals === -1) {
    const hint = flag === '--header' && text.includes(':') ? ' (not NAME: VALUE)' : '';
    throw new UsageError(`${flag} ${quoteStart(text)} has no '=': it takes ${expected}${hint}`);
  }
  if (equals === 0) throw new UsageError(`${flag} has nothing before '=': it takes ${expected}`);
  return [text.slice(0, equals), text.slice(equals + 1)];
}

/** `"text"`, cut before its first `:` or white space (then `"text…"`). */
function quoteStart(text: string): string {
  const cut = text.search(/[:\s]/);
  return cut === -1 ? `"${text}"` : `"${text.slice(0, cut)}…"`;
}

/** Whether the request passes every filter. Pure: the record is only read. */
export function requestMatches(request: CapturedRequest, filters: WaitFilters): boolean {
  if (filters.method !== undefined && request.method.toUpperCase() !== filters.method) return false;
  if (filters.path !== undefined && !filters.path.test(request.subPath)) return false;
  for (const { name, value } of filters.headers) {
    const found = request.headers.some(
      ([headerName, headerValue]) =>
        headerName.toLowerCase() === name && (value === undefined || headerValue === value),
    );
    if (!found) return false;
  }
  if (filters.json.length > 0) {
    const body = parseJsonBody(request);
    if (body === NOT_JSON) return false;
    for (const { path, value } of filters.json) {
      const found = valueAt(body, path);
      if (found === ABSENT) return false;
      if (value !== undefined && asText(found) !== value) return false;
    }
  }
  return true;
}

const NOT_JSON = Symbol('not JSON');
const ABSENT = Symbol('absent');

/** The parsed body of a request the server found to be JSON (`isJson`), whatever its encoding. */
function parseJsonBody(request: CapturedRequest): unknown {
  if (!request.isJson) return NOT_JSON;
  const text = request.bodyEncoding === 'utf8' ? request.body : Buffer.from(request.body, 'base64').toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The value at a dotted path: object members by name, array items by index. */
function valueAt(root: unknown, path: string[]): unknown {
  let value = root;
  for (const segment of path) {
    if (Array.isArray(value)) {
      if (!/^\d+$/.test(segment) || Number(segment) >= value.length) return ABSENT;
      value = value[Number(segment)] as unknown;
    } else if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) {
      value = (value as Record<string, unknown>)[segment];
    } else {
      return ABSENT;
    }
  }
  return value;
}

/** A string as itself; anything else as its JSON text (3, true, null, {"a":1}). */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

type PollOutcome =
  | { kind: 'answer'; answer: PollAnswer }
  /** 404 ENDPOINT_NOT_FOUND: expired, never was, or the key is wrong (the server cannot tell us which). */
  | { kind: 'gone' }
  /** Worth asking again: the server was busy, or the connection failed. */
  | { kind: 'retry'; message: string; retryAfterMs?: number; unreachable: boolean }
  | { kind: 'fatal'; message: string };

/** One poll. The key goes in the Authorization header only: never in the URL. */
async function poll(
  link: ShareLink,
  afterSeq: number,
  waitMs: number,
  stop: AbortSignal,
  accessToken: string | undefined,
): Promise<PollOutcome> {
  const limit = waitMs + POLL_SLACK_MS;
  const timeout = deadline(limit, stop);
  const answer = await pollRequests(
    { origin: link.origin, accessToken, signal: timeout.signal },
    { id: link.endpointId, key: link.key },
    afterSeq,
    waitMs,
  ).finally(timeout.clear);
  if (answer.ok) return { kind: 'answer', answer: answer.value };
  if (answer.status === 0) {
    if (stop.aborted) return { kind: 'fatal', message: 'stopped' };
    const reason = timeout.signal.aborted ? `no answer within ${formatSeconds(limit)}` : describeError(answer.cause);
    return { kind: 'retry', message: reason, unreachable: true };
  }
  if (answer.status === 200)
    return {
      kind: 'fatal',
      message: `${link.origin} answered something that is not a Hookwatch poll answer: is it a Hookwatch server?`,
    };
  const code = answer.error?.code;
  const detail = `${answer.status}${code ? ` ${code}` : ''}${answer.error ? `: ${answer.error.message}` : ''}`;
  if (answer.status === 404 && code === 'ENDPOINT_NOT_FOUND') return { kind: 'gone' };
  if (answer.status === 429 || answer.status >= 500) {
    return {
      kind: 'retry',
      message: `the server answered ${detail}`,
      unreachable: false,
      ...(answer.retryAfterSeconds === undefined ? {} : { retryAfterMs: answer.retryAfterSeconds * 1000 }),
    };
  }
  return { kind: 'fatal', message: `the server answered ${detail}` };
}

export async function runWait(args: string[], context: CommandContext): Promise<number> {
  const started = performance.now();
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      method: { type: 'string' },
      path: { type: 'string' },
      header: { type: 'string', multiple: true },
      json: { type: 'string', multiple: true },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(WAIT_USAGE);
    return 0;
  }
  const filters = parseWaitFilters(values);
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDuration(values.timeout);
  const link = await resolveShareLink(positionals, context);
  const endsAt = started + timeoutMs;
  const remaining = () => endsAt - performance.now();
  const stop = context.stopSignal;

  let afterSeq: number | undefined;
  let skipped = 0;
  let warnedGap = false;
  let attempt = 0;
  for (;;) {
    // The first call only learns where "new" starts: whatever is stored already is not new.
    const baseline = afterSeq === undefined;
    const waitMs = baseline ? 0 : Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(remaining())));
    const outcome = await poll(link, afterSeq ?? 0, waitMs, stop, context.accessToken);
    if (stop.aborted) {
      context.err('stopped before a matching request arrived');
      return 1;
    }
    if (outcome.kind === 'gone') {
      context.err(
        baseline ? 'endpoint not found: it expired, or the share link is wrong' : 'the endpoint is gone: it expired',
      );
      return 1;
    }
    if (outcome.kind === 'fatal') {
      context.err(outcome.message);
      return 1;
    }
    if (outcome.kind === 'retry') {
      // Not reaching the server at all the first time is most likely a wrong host or port.
      if (baseline && outcome.unreachable) {
        context.err(`cannot reach ${link.origin}: ${outcome.message}`);
        return 1;
      }
      const delay = Math.min(outcome.retryAfterMs ?? backoffDelay(attempt++), Math.max(0, remaining()));
      if (delay > 0) context.err(`poll failed (${outcome.message}); asking again in ${formatSeconds(delay)}`);
      if (!(await sleep(delay, stop))) {
        context.err('stopped before a matching request arrived');
        return 1;
      }
      if (remaining() <= 0) return timedOut(context, timeoutMs, baseline ? undefined : skipped);
      continue;
    }
    attempt = 0;
    const { answer } = outcome;
    if (afterSeq === undefined) {
      afterSeq = answer.lastSeq;
      context.err(
        `waiting up to ${formatSeconds(timeoutMs)} for a new matching request at endpoint ${link.endpointId} (after #${afterSeq})`,
      );
    } else {
      if (answer.gap && !warnedGap) {
        warnedGap = true;
        context.err(
          `warning: the server dropped requests after #${afterSeq} before they were read (it keeps only the newest); a matching one may have been missed`,
        );
      }
      for (const request of answer.requests) {
        if (request.seq <= afterSeq) continue;
        afterSeq = request.seq;
        if (requestMatches(request, filters)) {
          context.out(JSON.stringify(request));
          return 0;
        }
        skipped++;
      }
      // Pages of stored requests come at once; only an empty wait needs the clock.
      if (answer.more) continue;
    }
    if (remaining() <= 0) return timedOut(context, timeoutMs, skipped);
  }
}

/** `skipped` undefined: not one poll was answered. */
function timedOut(context: CommandContext, timeoutMs: number, skipped: number | undefined): number {
  const note =
    skipped === undefined
      ? 'the server answered no poll'
      : skipped === 0
        ? 'no new request'
        : `${skipped} new request(s) did not match`;
  context.err(`no matching request within ${formatSeconds(timeoutMs)} (${note})`);
  return 1;
}
