/**
 * The Redis store's server-side scripts. Each runs atomically, so a request is numbered, stored,
 * announced (SPUBLISH from inside the script: announcements of one endpoint leave in seq order,
 * and every change of stored state is announced in the step that makes it) and trimmed in one
 * step, and lifetimes, counts and byte budgets hold across instances.
 *
 * Time is Redis's (`TIME`), never an instance's clock: instances pass durations, and a deadline
 * is judged the same way whichever instance asks (ARGV[2] is empty in production; tests that
 * move a clock pass its reading there instead).
 *
 * Layout. Every key and channel of a partition shares one hash slot: P is the configured prefix
 * and the partition's hash tag (`hookwatch:v4:{p0}`, ARGV[1]), so a script touches one slot and
 * runs unchanged on Redis Cluster. Every key a script touches is declared in its KEYS
 * (redis/calls.ts, `keysIn`: the partition's keys, then each endpoint's it is about), so
 * that while a slot moves between shards Redis redirects the whole call, or asks it to try
 * again, rather than run it with some keys on each side. Scripts that would reach other
 * endpoints' keys do not: eviction across endpoints and the sweep run as their own calls, with
 * the endpoints they will touch read first and declared.
 *   P ep:<id>   hash: rec (endpoint JSON without response), resp (response JSON), rv (resp's
 *               version, counted up by each change), kind, seq, cleared; rc<i>: answers rule i
 *               gave since the configuration was set; rsp, rspu: the responder's token and the
 *               end of its claim; grace: how long a live one outlives its last holder
 *   P rq:<id>   list: the stored `request` messages, oldest first
 *   P sq:<id>   list: their seqs, in the same places: each entry carries its number, so a seq
 *               lost (Redis lost a write) or deleted is a gap that costs nothing
 *   P pr:<id>   sorted set: the instances holding a live endpoint (their heartbeats say for how long)
 *   P wc:<id>   hash: instance -> sockets watching on it
 *   P fw:<id>   hash: seq -> the request's latest forward result
 *   P ik:<instance>  sorted set: the instance's latest captures in the partition, by capture
 *               number (its idempotency key): "<no>:<seq>:<choice>" for one stored, "<no>:late"
 *               for one whose sender was told it failed (SETTLE); the newest REMEMBERED_CAPTURES
 *   P hb        sorted set: instance -> end of its heartbeat (one renewal per instance, not per endpoint)
 *   P index     sorted set: endpoint id -> deadline (ms); alive while the deadline is ahead, or,
 *               for a live endpoint, while a holder's heartbeat is (the deadline then follows it)
 *   P kept      sorted set: the kept endpoints' ids -> deadline, for counting them apart
 *   P sizes     hash: endpoint id -> bytes its stored requests cost
 *   P total     bytes held by all the partition's endpoints;  P evicted: requests evicted
 *   P aged      sorted set: "<id> <seq>" -> age, for evicting the oldest requests across endpoints
 *   P agecounter  the ages given: a count of every request ever stored in the partition, which
 *               also tells an instance when Redis has lost writes it saw (a restart from an
 *               older snapshot, a failover to a lagging replica)
 *   P rbjump    how many seqs every endpoint's numbering has had to move on for lost writes
 *               (an endpoint's rbj says how much of it it has applied)
 *   P cfg       hash: the budgets every instance uses (count, perEp, total, overhead),
 *               written at start (redis/store.ts): one set of limits for all, not each caller's
 *   P ch:<id>   sharded pub/sub channel: "R <seq> <capturedAtMs> <age>\n<message>", "X\n<message>"
 *               (the endpoint is gone) or "E\n<message>"
 * Per-endpoint keys also expire an hour after the deadline, as a backstop for a deployment where
 * no instance sweeps any more.
 *
 * The scripts are in ./lua, one file each (prelude.lua first in every one), each naming its
 * arguments at its top; `{{NAME}}` in them is one of the constants below, filled in when they load.
 *
 * Scripts that only free memory or read carry `allow-oom`: under `maxmemory` with
 * `noeviction` they still run, and free before they write anything. The others are refused
 * whole when Redis is out of memory (a flagged script is checked once, before it runs), so
 * nothing is half done; the store then frees a batch of the oldest requests (EVICT) and tries once more.
 */

import { readFileSync } from 'node:fs';
import { MAX_RESPONDER_CLAIMS } from '../one-process/responder-claims.js';
import { MAX_RULES } from '../shared/answer-rules.js';
import { EVICTED_MESSAGE_HEAD } from '../shared/protocol.js';
import { CLEARED_MESSAGE_HEAD, EXPIRED_MESSAGE, REMOVED_MESSAGE_HEAD } from '../shared/server-messages.js';

/** Keys every script may touch in its partition, after the prefix and hash tag: declared on every call. */
export const PARTITION_KEYS = [
  'index',
  'kept',
  'hb',
  'aged',
  'cfg',
  'sizes',
  'total',
  'evicted',
  'agecounter',
  'rbjump',
] as const;
/** Keys of one endpoint, each followed by its id: declared for every endpoint a call is about. */
export const ENDPOINT_KEYS = ['ep:', 'rq:', 'sq:', 'fw:', 'pr:', 'wc:'] as const;

/** The error a script stops with when its partition has no settings (CONFIGURE). */
export const NO_SETTINGS = 'NOCONFIG the partition has no settings';

/** Requests one call evicts at most for the store-wide budget: a lowered budget is reached over several calls, never in one long block. */
export const EVICT_BATCH = 100;
/**
 * Captures per instance and partition remembered by their idempotency key: more than one
 * instance ever has in flight at once, so a capture sent again after a cut is always recognised.
 */
export const REMEMBERED_CAPTURES = 4096;

/** A Lua string literal of `text` (JSON's escapes are Lua's too). */
const lua = (text: string): string => JSON.stringify(text);

/** What `{{NAME}}` stands for in the scripts. */
const CONSTANTS: Record<string, string> = {
  EVICT_BATCH: String(EVICT_BATCH),
  REMEMBERED_CAPTURES: String(REMEMBERED_CAPTURES),
  MAX_RULES: String(MAX_RULES),
  MAX_RESPONDER_CLAIMS: String(MAX_RESPONDER_CLAIMS),
  NO_SETTINGS: lua(NO_SETTINGS),
  EVICTED_MESSAGE_HEAD: lua(EVICTED_MESSAGE_HEAD),
  CLEARED_MESSAGE_HEAD: lua(CLEARED_MESSAGE_HEAD),
  REMOVED_MESSAGE_HEAD: lua(REMOVED_MESSAGE_HEAD),
  EXPIRED_MESSAGE: lua(EXPIRED_MESSAGE),
};

/** A script file of ./lua with its constants filled in. */
function source(name: string): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8').replace(
    /\{\{([A-Z_]+)\}\}/g,
    (_, constant: string) => {
      const value = CONSTANTS[constant];
      if (value === undefined) throw new Error(`${name}.lua: no constant ${constant}`);
      return value;
    },
  );
}
const PRELUDE = source('prelude');

/**
 * A script as Redis runs it: the shebang (with `allow-oom` when its file says so: it frees or
 * reads, and must run when Redis is out of memory; the others are refused whole then), the
 * prelude, then the file.
 */
function load(name: string): string {
  const text = source(name);
  return `#!lua${text.startsWith('--! flags=allow-oom') ? ' flags=allow-oom' : ''}\n${PRELUDE}${text}`;
}

export const CONFIGURE = load('configure');
export const CREATE = load('create');
export const GET = load('get');
export const DELETE = load('delete');
export const EXTEND = load('extend');
export const COUNT = load('count');
export const SET_RESPONSE = load('set-response');
export const HOLD = load('hold');
export const COUNT_WATCHERS = load('count-watchers');
export const RELEASE = load('release');
export const APPEND = load('append');
export const SETTLE = load('settle');
export const CHECK_AGES = load('check-ages');
export const EVICT = load('evict');
export const SET_ANSWER = load('set-answer');
export const SET_RESPONDER = load('set-responder');
export const READ_LOG = load('read-log');
export const FORWARDED = load('forwarded');
export const DELETE_REQUEST = load('delete-request');
export const CLEAR = load('clear');
export const SWEEP = load('sweep');
export const STATS = load('stats');
