// What the page says about an endpoint's lifetime and limits, and about the kinds a new one can be.
import { maxRequests, type PageEndpoint } from './endpoint.js';

/** A limit in bytes, round when it is: `1 MB`, `64 KB`, `1.5 MB`. */
export function formatLimit(bytes: number): string {
  const units: Array<[number, string]> = [
    [1024 * 1024, 'MB'],
    [1024, 'KB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} B`;
}

/** The lifetimes the page offers a kept endpoint: 2 h (the server's default), a day, a week. */
export const KEPT_SPANS: readonly number[] = [2 * 3600_000, 24 * 3600_000, 7 * 24 * 3600_000];

/**
 * A span of time, to the minute from a minute up and to the second below: `2 h`, `1 h 59 min`,
 * `30 min`, `42 s`; from a day up to the hour: `7 days`, `1 day`, `6 d 23 h`.
 */
export function formatSpan(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${Math.max(0, seconds)} s`;
  const minutes = Math.max(1, Math.floor(ms / 60_000));
  const hours = Math.floor(minutes / 60);
  if (hours === 0) return `${minutes} min`;
  if (hours >= 24) {
    const days = Math.floor(hours / 24);
    if (hours % 24 === 0) return days === 1 ? '1 day' : `${days} days`;
    return `${days} d ${hours % 24} h`;
  }
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayAndClock = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });

/** `15:42`, or `Tue 15:42` when not today. */
function localClock(date: Date, now: Date): string {
  return (date.toDateString() === now.toDateString() ? clock : dayAndClock).format(date);
}

/** How long a kept endpoint lives from its creation, when the endpoint tells it. */
export function keptSpan(endpoint: PageEndpoint): number | undefined {
  if (endpoint.kind !== 'kept' || !endpoint.expiresAt || !endpoint.createdAt) return undefined;
  const span = Date.parse(endpoint.expiresAt) - Date.parse(endpoint.createdAt);
  return span > 0 ? span : undefined;
}

/**
 * The line under the receiver URL: `expires in 1 h 59 min (15:42 local) · keeps the newest 50
 * requests · bodies up to 64 KB`, or for a live one `lives while a tab watches it, then 30 s · …`.
 */
export function lifetimeText(endpoint: PageEndpoint, nowMs: number): string {
  let life: string;
  if (endpoint.kind === 'kept') {
    const left = endpoint.expiresAt ? Date.parse(endpoint.expiresAt) - nowMs : Number.NaN;
    if (Number.isNaN(left)) life = 'lives a fixed time, watched or not';
    else if (left <= 0) life = 'expiring now';
    else life = `expires in ${formatSpan(left)} (${localClock(new Date(nowMs + left), new Date(nowMs))} local)`;
  } else {
    const grace = Number.isFinite(endpoint.graceSeconds) ? `, then ${endpoint.graceSeconds} s` : ', then a short grace';
    life = `lives while a tab watches it${grace}`;
  }
  if (endpoint.kind === 'kept' && endpoint.redact === false) life += ' · secrets kept as received';
  if (endpoint.partial) return life;
  return `${life} · keeps the newest ${maxRequests(endpoint)} requests · bodies up to ${formatLimit(endpoint.maxBodyBytes)}`;
}

/**
 * What Extend offers: the lifetime chosen for kept endpoints when it is longer than what is
 * left, else the shortest one offered that is; undefined when none is (Extend never shortens).
 */
export function extendSpan(chosenMs: number, leftMs: number): number | undefined {
  if (chosenMs > leftMs) return chosenMs;
  return KEPT_SPANS.find((span) => span > leftMs);
}

/** A kept endpoint's last hour: the page warns that it is about to end. */
export const EXPIRY_WARNING_MS = 3600_000;

/** The warning in a kept endpoint's last hour, or undefined: `Expires in 42 min: Extend it, or its URL answers 404 from 15:42.` */
export function expiryWarning(endpoint: PageEndpoint, nowMs: number): string | undefined {
  if (endpoint.kind !== 'kept' || !endpoint.expiresAt) return undefined;
  const at = Date.parse(endpoint.expiresAt);
  const left = at - nowMs;
  if (!(left > 0 && left <= EXPIRY_WARNING_MS)) return undefined;
  return `Expires in ${formatSpan(left)}: extend it, or its URL answers 404 from ${localClock(new Date(at), new Date(nowMs))}.`;
}
