// The endpoints this browser made or joined, with their watch keys, so the page can go back to
// one without its link (product decision 20: without a server-side user, the page keeps its own
// list). Kept in localStorage, which only this origin reads; what is read back is checked, since
// anything (another tab, an extension, a full disk) may have written it. No DOM here: it is
// unit-tested with a Storage of its own.
import type { EndpointInfo } from '../../../src/shared/protocol.js';
import { formatSpan } from './lifetime.js';

const LIST_KEY = 'hookwatch.list';
/** Entries kept, the most recently opened first: the list is a way back, not an archive. */
export const LIST_MAX = 30;
/** More stored text than this is not read: the list is small, and a huge value would be written by something else. */
const LIST_MAX_CHARS = 64 * 1024;

/** One endpoint in the list: what the list shows, and what reopening it takes. */
export interface ListedEndpoint {
  id: string;
  key: string;
  kind: EndpointInfo['kind'];
  /** Its receiver URL, shown as text only. */
  url: string;
  /** A kept endpoint's expiry (ISO 8601), as last heard. */
  expiresAt?: string;
  /** Requests it had received when last seen here (since its last clear). */
  requests: number;
  /** When this browser last opened it (epoch ms). */
  openedAt: number;
}

/** The Storage the list lives in: localStorage in the page, a Map in the tests. */
export type ListStorage = Pick<Storage, 'getItem' | 'setItem'>;

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[A-Za-z0-9]{1,128}$/;

/** An entry read back, or undefined when it is not one this page wrote. */
function checked(value: unknown): ListedEndpoint | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const entry = value as Record<string, unknown>;
  const { id, key, kind, url, expiresAt, requests, openedAt } = entry;
  if (typeof id !== 'string' || !ID.test(id) || typeof key !== 'string' || !KEY.test(key)) return undefined;
  if ((kind !== 'live' && kind !== 'kept') || typeof url !== 'string' || url.length > 2048 || !/^https?:\/\//.test(url))
    return undefined;
  if (expiresAt !== undefined && (typeof expiresAt !== 'string' || Number.isNaN(Date.parse(expiresAt))))
    return undefined;
  const count = typeof requests === 'number' && Number.isSafeInteger(requests) && requests >= 0 ? requests : 0;
  const opened = typeof openedAt === 'number' && Number.isFinite(openedAt) ? openedAt : 0;
  return {
    id,
    key,
    kind,
    url,
    ...(typeof expiresAt === 'string' ? { expiresAt } : {}),
    requests: count,
    openedAt: opened,
  };
}

/** The list, the most recently opened first; empty when none is stored or what is stored is not a list. */
export function readList(storage: ListStorage | undefined): ListedEndpoint[] {
  let text: string | null = null;
  try {
    text = storage?.getItem(LIST_KEY) ?? null;
  } catch {
    return [];
  }
  if (text === null || text.length > LIST_MAX_CHARS) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const seen = new Set<string>();
  const entries: ListedEndpoint[] = [];
  for (const value of parsed.slice(0, LIST_MAX)) {
    const entry = checked(value);
    if (entry && !seen.has(entry.id)) {
      seen.add(entry.id);
      entries.push(entry);
    }
  }
  return entries.sort((a, b) => b.openedAt - a.openedAt);
}

function writeList(storage: ListStorage | undefined, entries: ListedEndpoint[]): void {
  try {
    storage?.setItem(LIST_KEY, JSON.stringify(entries.slice(0, LIST_MAX)));
  } catch {
    // Storage off or full: the list lasts as long as the page.
  }
}

/** The endpoint this page watches now: first in the list, with what it is now (its request count kept unless given). */
export function listOpened(
  storage: ListStorage | undefined,
  endpoint: Pick<EndpointInfo, 'id' | 'key' | 'kind' | 'url' | 'expiresAt'>,
  nowMs: number,
  requests?: number,
): void {
  const entries = readList(storage);
  const old = entries.find((entry) => entry.id === endpoint.id);
  const entry: ListedEndpoint = {
    id: endpoint.id,
    key: endpoint.key,
    kind: endpoint.kind,
    url: endpoint.url,
    ...(endpoint.expiresAt ? { expiresAt: endpoint.expiresAt } : {}),
    requests: requests ?? old?.requests ?? 0,
    openedAt: nowMs,
  };
  writeList(storage, [entry, ...entries.filter((other) => other.id !== endpoint.id)]);
}

/** What changed about a listed endpoint since (its request count, a new expiry); nothing when it is not listed. */
export function listUpdate(
  storage: ListStorage | undefined,
  id: string,
  change: Partial<Pick<ListedEndpoint, 'requests' | 'expiresAt'>>,
): void {
  const entries = readList(storage);
  const index = entries.findIndex((entry) => entry.id === id);
  const entry = entries[index];
  if (!entry) return;
  if (
    (change.requests === undefined || change.requests === entry.requests) &&
    (change.expiresAt === undefined || change.expiresAt === entry.expiresAt)
  )
    return;
  entries[index] = { ...entry, ...change };
  writeList(storage, entries);
}

/** Takes an endpoint off the list (its key is forgotten with it). */
export function listForget(storage: ListStorage | undefined, id: string): void {
  const entries = readList(storage);
  if (entries.some((entry) => entry.id === id))
    writeList(
      storage,
      entries.filter((entry) => entry.id !== id),
    );
}

/** Whether an entry is gone for sure: a kept endpoint past its expiry. A live one lives while watched, which only joining tells. */
export function listedExpired(entry: ListedEndpoint, nowMs: number): boolean {
  return entry.kind === 'kept' && entry.expiresAt !== undefined && Date.parse(entry.expiresAt) <= nowMs;
}

/**
 * What a visit to `/` opens: the most recently opened kept endpoint still alive (a minute's margin,
 * so it does not expire as it opens). Live ones are not reopened: each ends with the last tab
 * watching it, and a new one costs nothing, while a kept one made on each visit piles up on disk.
 */
export function lastAlive(entries: readonly ListedEndpoint[], nowMs: number): ListedEndpoint | undefined {
  return entries.find(
    (entry) => entry.kind === 'kept' && entry.expiresAt !== undefined && Date.parse(entry.expiresAt) > nowMs + 60_000,
  );
}

/** The part of its URL that names it: its id (a name for a named kept endpoint). */
export function listedName(entry: Pick<ListedEndpoint, 'id'>): string {
  return entry.id;
}

/** `Kept · expires in 6 d 23 h · 3 requests`, `Live · while a tab watches it · 1 request`, `Kept · expired`. */
export function listedSummary(entry: ListedEndpoint, nowMs: number): string {
  const requests = `${entry.requests} request${entry.requests === 1 ? '' : 's'}`;
  if (entry.kind === 'live') return `Live · while a tab watches it · ${requests}`;
  if (listedExpired(entry, nowMs)) return 'Kept · expired';
  const left = entry.expiresAt === undefined ? undefined : Date.parse(entry.expiresAt) - nowMs;
  return `Kept · ${left === undefined ? 'lives a fixed time' : `expires in ${formatSpan(left)}`} · ${requests}`;
}
