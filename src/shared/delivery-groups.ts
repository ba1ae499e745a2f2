/**
 * Which captured requests are attempts of one delivery: the same provider
 * delivery id, or, when a request carries none, the same method, path and body within a window.
 * Each group's attempts come with the gap before the next, and the provider's documented retry
 * schedule where one is published. Pure: the page groups its log, `hookwatch tail` numbers attempts.
 */
import { bodyTextOf } from './body-text.js';
import type { CapturedRequest } from './schemas/captured-request.js';

export type Provider = 'github' | 'standard-webhooks' | 'svix' | 'stripe' | 'shopify' | 'slack' | 'twilio';

/** What ties attempts together: a provider's id and where it was read, or an identical body. */
export interface DeliveryKey {
  /** Equal for the attempts of one delivery. */
  key: string;
  provider?: Provider;
  /** The delivery id as sent (absent for an identical body). */
  id?: string;
  /** Where it was read: `X-GitHub-Delivery header`, `event id in the body`, `identical body`. */
  source: string;
  /** The provider's own attempt number, when it sends one (Slack's X-Slack-Retry-Num + 1). */
  attempt?: number;
}

/** A provider's retry schedule, as its documentation states it. */
export interface RetrySchedule {
  label: string;
  /** Gap before attempt 2, 3, … (ms); absent when the provider publishes no exact gaps. */
  gapsMs?: readonly number[];
  /** The schedule in words. */
  summary: string;
  /** Where it is documented. */
  source: string;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Svix (and so Standard Webhooks senders built on it): https://docs.svix.com/retries, "each
 * period is started following the failure of the preceding attempt". Slack Events API:
 * https://api.slack.com/apis/events-api#retries (three retries: nearly at once, after 1 minute,
 * after 5 minutes). GitHub does not retry on its own (https://docs.github.com/en/webhooks/
 * using-webhooks/handling-failed-webhook-deliveries): a repeat is a manual redelivery. Stripe
 * (https://docs.stripe.com/webhooks#retries) and Shopify (https://shopify.dev/docs/apps/build/
 * webhooks/troubleshooting-webhooks) publish a span, not the gaps.
 */
export const RETRY_SCHEDULES: Record<Provider, RetrySchedule> = {
  svix: {
    label: 'Svix',
    gapsMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
    summary: 'at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h',
    source: 'https://docs.svix.com/retries',
  },
  'standard-webhooks': {
    label: 'Standard Webhooks (as Svix)',
    gapsMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
    summary: 'at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h',
    source: 'https://docs.svix.com/retries',
  },
  slack: {
    label: 'Slack',
    gapsMs: [0, MINUTE, 5 * MINUTE],
    summary: 'up to 3 retries: nearly at once, after 1 min, after 5 min',
    source: 'https://api.slack.com/apis/events-api#retries',
  },
  github: {
    label: 'GitHub',
    summary: 'no automatic retries: a repeat is a manual redelivery',
    source: 'https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries',
  },
  stripe: {
    label: 'Stripe',
    summary: 'retried for up to 3 days with exponential backoff (no exact gaps published)',
    source: 'https://docs.stripe.com/webhooks#retries',
  },
  shopify: {
    label: 'Shopify',
    summary: 'retried 8 times over 4 hours (no exact gaps published)',
    source: 'https://shopify.dev/docs/apps/build/webhooks/troubleshooting-webhooks',
  },
  twilio: {
    label: 'Twilio',
    summary: 'retries as the connection overrides in the URL set them (#rc=…); no fixed schedule',
    source: 'https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides',
  },
};

/** Identical bodies further apart than this are two deliveries, not two attempts. */
export const BODY_WINDOW_MS = HOUR;
/** A delivery id longer than this is not one (it would only bloat keys). */
const MAX_ID_CHARS = 256;

function header(request: Pick<CapturedRequest, 'headers'>, name: string): string | undefined {
  for (const [key, value] of request.headers) if (key.toLowerCase() === name) return value.trim();
  return undefined;
}

/** A top-level string field of a JSON body (a delivery id is always near the top and short). */
function jsonField(request: CapturedRequest, field: string): string | undefined {
  if (!request.isJson) return undefined;
  const text = bodyTextOf(request);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const found = (value as Record<string, unknown>)[field];
    return typeof found === 'string' && found !== '' && found.length <= MAX_ID_CHARS ? found : undefined;
  } catch {
    return undefined;
  }
}

/** Two 32-bit FNV-1a hashes of the text: a compact key for an identical body (the page compares bodies in full too). */
function hashText(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  return `${(a >>> 0).toString(36)}${(b >>> 0).toString(36)}`;
}

function idKey(provider: Provider, id: string | undefined, source: string, attempt?: number): DeliveryKey | undefined {
  if (id === undefined || id === '' || id.length > MAX_ID_CHARS) return undefined;
  return { key: `${provider}:${id}`, provider, id, source, ...(attempt === undefined ? {} : { attempt }) };
}

/**
 * The request's delivery key: the first provider id found (headers before bodies), else its
 * method, path and body (requests without a body are never grouped: a health check is not a retry).
 */
export function deliveryKeyOf(request: CapturedRequest): DeliveryKey | undefined {
  // The page groups its whole log at each render: each request's key (a hash of up to 1 MiB) is found once.
  const known = knownKeys.get(request);
  if (known !== undefined) return known ?? undefined;
  const key = findDeliveryKey(request);
  knownKeys.set(request, key ?? null);
  return key;
}

const knownKeys = new WeakMap<CapturedRequest, DeliveryKey | null>();

function findDeliveryKey(request: CapturedRequest): DeliveryKey | undefined {
  const byHeader =
    idKey('github', header(request, 'x-github-delivery'), 'X-GitHub-Delivery header') ??
    idKey('standard-webhooks', header(request, 'webhook-id'), 'webhook-id header') ??
    idKey('svix', header(request, 'svix-id'), 'svix-id header') ??
    idKey('shopify', header(request, 'x-shopify-webhook-id'), 'X-Shopify-Webhook-Id header') ??
    idKey('twilio', header(request, 'i-twilio-idempotency-token'), 'I-Twilio-Idempotency-Token header');
  if (byHeader) return byHeader;
  if (header(request, 'stripe-signature') !== undefined || jsonField(request, 'object') === 'event') {
    const id = jsonField(request, 'id');
    if (id?.startsWith('evt_')) return idKey('stripe', id, 'event id in the body');
  }
  const retryNum = header(request, 'x-slack-retry-num');
  if (retryNum !== undefined || header(request, 'x-slack-signature') !== undefined) {
    const retries = retryNum !== undefined && /^\d{1,3}$/.test(retryNum) ? Number(retryNum) : 0;
    const found = idKey('slack', jsonField(request, 'event_id'), 'event_id in the body', retries + 1);
    if (found) return found;
  }
  if (request.storedSize === 0) return undefined;
  const path = request.subPath || '/';
  return { key: `body:${request.method} ${path}:${request.size}:${hashText(request.body)}`, source: 'identical body' };
}

export interface DeliveryAttempt {
  request: CapturedRequest;
  /** 1 for the first attempt seen (or the provider's own number). */
  attempt: number;
  /** Time from this attempt to the next one; absent on the last. */
  gapAfterMs?: number;
  /** What the provider's schedule says that gap should be, where it says. */
  expectedGapAfterMs?: number;
}

export interface DeliveryGroup {
  key: DeliveryKey;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  schedule?: RetrySchedule;
}

function timeOf(request: CapturedRequest): number {
  const time = Date.parse(request.receivedAt);
  return Number.isNaN(time) ? 0 : time;
}

/**
 * The deliveries among `requests`, in the order of their first attempts. A group by identical
 * body holds requests whose bodies are equal in full, each within `bodyWindowMs` of the one
 * before; a group by id holds every request with that id.
 */
export function groupDeliveries(requests: readonly CapturedRequest[], bodyWindowMs = BODY_WINDOW_MS): DeliveryGroup[] {
  const sorted = [...requests].sort((a, b) => timeOf(a) - timeOf(b) || a.seq - b.seq);
  const groups: DeliveryGroup[] = [];
  const open = new Map<string, DeliveryGroup[]>();
  const loose: CapturedRequest[] = [];
  for (const request of sorted) {
    const key = deliveryKeyOf(request);
    if (!key) {
      loose.push(request);
      continue;
    }
    const candidates = open.get(key.key) ?? [];
    const group = key.provider
      ? candidates[0]
      : candidates.find((candidate) => {
          const last = (candidate.attempts.at(-1) as DeliveryAttempt).request;
          return (
            timeOf(request) - timeOf(last) <= bodyWindowMs &&
            last.body === request.body &&
            last.bodyEncoding === request.bodyEncoding
          );
        });
    const attempt = { request, attempt: key.attempt ?? 0 };
    if (group) group.attempts.push(attempt);
    else {
      const created: DeliveryGroup = {
        key,
        attempts: [attempt],
        ...(key.provider ? { schedule: RETRY_SCHEDULES[key.provider] } : {}),
      };
      groups.push(created);
      open.set(key.key, [...candidates, created]);
    }
  }
  for (const request of loose)
    groups.push({ key: { key: `seq:${request.seq}`, source: 'no body' }, attempts: [{ request, attempt: 0 }] });
  for (const group of groups) numberAttempts(group);
  return groups.sort(
    (a, b) =>
      timeOf((a.attempts[0] as DeliveryAttempt).request) - timeOf((b.attempts[0] as DeliveryAttempt).request) ||
      (a.attempts[0] as DeliveryAttempt).request.seq - (b.attempts[0] as DeliveryAttempt).request.seq,
  );
}

function numberAttempts(group: DeliveryGroup): void {
  const { attempts } = group;
  attempts.forEach((entry, index) => {
    // Slack numbers its retries: an attempt whose earlier tries were not captured keeps its number.
    if (entry.attempt === 0) entry.attempt = index + 1;
    const next = attempts[index + 1];
    if (!next) return;
    entry.gapAfterMs = timeOf(next.request) - timeOf(entry.request);
    // The schedule's gap after this attempt by its number: a Slack retry whose earlier tries were not captured keeps its place.
    const expected =
      next.attempt === entry.attempt + 1 || next.attempt === 0
        ? group.schedule?.gapsMs?.[entry.attempt - 1]
        : undefined;
    if (expected !== undefined) entry.expectedGapAfterMs = expected;
  });
}

/** The seqs of requests in deliveries with more than one attempt: what "retried deliveries only" shows. */
export function retriedSeqs(requests: readonly CapturedRequest[], bodyWindowMs = BODY_WINDOW_MS): Set<number> {
  const seqs = new Set<number>();
  for (const group of groupDeliveries(requests, bodyWindowMs)) {
    if (group.attempts.length > 1) for (const { request } of group.attempts) seqs.add(request.seq);
  }
  return seqs;
}

/**
 * Numbers attempts as they arrive, for a stream (`hookwatch tail`): remembers the last
 * `maxKeys` deliveries (the oldest forgotten first), so memory stays bounded however long it runs.
 */
export function createAttemptCounter(
  maxKeys = 10_000,
  bodyWindowMs = BODY_WINDOW_MS,
): (request: CapturedRequest) => { attempt: number; key: DeliveryKey } | undefined {
  const seen = new Map<string, { count: number; lastMs: number }>();
  return (request) => {
    const key = deliveryKeyOf(request);
    if (!key) return undefined;
    const now = timeOf(request);
    const entry = seen.get(key.key);
    const expired = entry !== undefined && !key.provider && now - entry.lastMs > bodyWindowMs;
    const count = entry === undefined || expired ? 1 : entry.count + 1;
    seen.delete(key.key);
    seen.set(key.key, { count, lastMs: now });
    if (seen.size > maxKeys) seen.delete(seen.keys().next().value as string);
    return { attempt: key.attempt ?? count, key };
  };
}
