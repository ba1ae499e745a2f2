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
 * and the partition's hash tag (`hookwatch:v3:{p0}`, ARGV[1]), so a script touches one slot and
 * runs unchanged on Redis Cluster. Every key a script touches is declared in its KEYS
 * (redis-store.ts, `declaredKeys`: the partition's keys, then each endpoint's it is about), so
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
 *               written at start (redis-store.ts): one set of limits for all, not each caller's
 *   P ch:<id>   sharded pub/sub channel: "R <seq> <capturedAtMs> <age>\n<message>", "X\n<message>"
 *               (the endpoint is gone) or "E\n<message>"
 * Per-endpoint keys also expire an hour after the deadline, as a backstop for a deployment where
 * no instance sweeps any more.
 *
 * Scripts that only free memory or read carry `allow-oom`: under `maxmemory` with
 * `noeviction` they still run, and free before they write anything. The others are refused
 * whole when Redis is out of memory (a flagged script is checked once, before it runs), so
 * nothing is half done; the store then frees a batch of the oldest requests (EVICT) and tries once more.
 */

import { MAX_RESPONDER_CLAIMS } from './responder-claims.js';
import { MAX_RULES } from '../shared/answer-rules.js';
import { EVICTED_MESSAGE_HEAD, REQUEST_MESSAGE_HEAD } from '../shared/protocol.js';
import { CLEARED_MESSAGE_HEAD, EXPIRED_MESSAGE, REMOVED_MESSAGE_HEAD } from '../shared/server-messages.js';

/** Keys every script may touch in its partition, after the prefix and hash tag: declared on every call. */
export const PARTITION_KEYS = ['index', 'kept', 'hb', 'aged', 'cfg', 'sizes', 'total', 'evicted', 'agecounter', 'rbjump'] as const;
/** Keys of one endpoint, each followed by its id: declared for every endpoint a call is about. */
export const ENDPOINT_KEYS = ['ep:', 'rq:', 'sq:', 'fw:', 'pr:', 'wc:'] as const;

/** The error a script stops with when its partition has no settings (CONFIGURE). */
export const NO_SETTINGS = 'NOCONFIG the partition has no settings';

/** A Lua string literal of `text` (JSON's escapes are Lua's too). */
const lua = (text: string): string => JSON.stringify(text);

/** Requests one call evicts at most for the store-wide budget: a lowered budget is reached over several calls, never in one long block. */
export const EVICT_BATCH = 100;
/**
 * Captures per instance and partition remembered by their idempotency key: more than one
 * instance ever has in flight at once, so a capture sent again after a cut is always recognised.
 */
export const REMEMBERED_CAPTURES = 4096;

const PRELUDE = `
local P = ARGV[1]
local NOW = tonumber(ARGV[2])
if not NOW then
  local TIME = redis.call('TIME')
  NOW = tonumber(TIME[1]) * 1000 + math.floor(tonumber(TIME[2]) / 1000)
end
local BACKSTOP_MS = 3600000
local function epKey(id) return P .. 'ep:' .. id end
local function publish(id, payload) redis.call('SPUBLISH', P .. 'ch:' .. id, payload) end
-- The partition's budgets (CONFIGURE), read in one call. None (Redis restarted empty, or the
-- keys were lost): the script stops with NOCONFIG, before it has written anything, and the
-- instance writes them again and runs it once more (redis-store.ts): never built-in defaults.
local function settings()
  local c = redis.call('HMGET', P .. 'cfg', 'count', 'perEp', 'total', 'overhead')
  if not c[1] then error({err = ${lua(NO_SETTINGS)}}) end
  return {count = tonumber(c[1]), perEp = tonumber(c[2]), total = tonumber(c[3]), overhead = tonumber(c[4])}
end
local function backstop(id, deadline)
  local at = math.floor(deadline + BACKSTOP_MS)
  for _, key in ipairs({epKey(id), P .. 'rq:' .. id, P .. 'sq:' .. id, P .. 'pr:' .. id, P .. 'wc:' .. id, P .. 'fw:' .. id}) do
    redis.call('PEXPIREAT', key, at)
  end
end
-- The endpoint's deadline when it is alive now, else nil. A live endpoint past its deadline
-- lives on while an instance holding it still beats: its deadline then moves to that
-- heartbeat's end plus the grace (and its keys' backstop with it).
local function alive(id)
  local deadline = tonumber(redis.call('ZSCORE', P .. 'index', id))
  if not deadline then return nil end
  if deadline > NOW then return deadline end
  local latest = nil
  for _, holder in ipairs(redis.call('ZRANGE', P .. 'pr:' .. id, 0, -1)) do
    local beat = tonumber(redis.call('ZSCORE', P .. 'hb', holder))
    if beat and (latest == nil or beat > latest) then latest = beat end
  end
  if latest == nil then return nil end
  local moved = latest + tonumber(redis.call('HGET', epKey(id), 'grace') or '0')
  if moved <= NOW then return nil end
  redis.call('ZADD', P .. 'index', moved, id)
  backstop(id, moved)
  return moved
end
-- The seq of the endpoint's oldest stored request; nil when it holds none.
local function headSeq(id)
  return tonumber(redis.call('LINDEX', P .. 'sq:' .. id, 0))
end
-- Where stored request 'seq' is in the endpoint's lists (from 0); nil when it is not stored.
local function placeOf(id, seq)
  return redis.call('LPOS', P .. 'sq:' .. id, seq)
end
-- Takes a stored request's forward result and its place in the eviction order away, and
-- counts what it cost (message bytes 'length', store.ts, storedCost) off the budgets.
local function forgetRequest(id, seq, length, overhead)
  local cost = length + overhead
  local fw = P .. 'fw:' .. id
  local forwarded = redis.call('HGET', fw, seq)
  if forwarded then
    cost = cost + #forwarded
    redis.call('HDEL', fw, seq)
  end
  redis.call('HINCRBY', P .. 'sizes', id, -cost)
  redis.call('DECRBY', P .. 'total', cost)
  redis.call('ZREM', P .. 'aged', id .. ' ' .. seq)
  return cost
end
-- Removes the endpoint's oldest stored request with its forward result; returns the bytes they
-- cost and its seq.
local function dropOldest(id, overhead)
  local seq = tonumber(redis.call('LPOP', P .. 'sq:' .. id))
  return forgetRequest(id, seq, #redis.call('LPOP', P .. 'rq:' .. id), overhead), seq
end
-- Removes every stored request of the endpoint, freeing before it writes.
local function dropAll(id)
  local bytes = tonumber(redis.call('HGET', P .. 'sizes', id) or '0')
  local members = {}
  for _, seq in ipairs(redis.call('LRANGE', P .. 'sq:' .. id, 0, -1)) do
    table.insert(members, id .. ' ' .. seq)
    if #members == 1000 then redis.call('ZREM', P .. 'aged', unpack(members)) members = {} end
  end
  if #members > 0 then redis.call('ZREM', P .. 'aged', unpack(members)) end
  redis.call('DEL', P .. 'rq:' .. id, P .. 'sq:' .. id, P .. 'fw:' .. id)
  redis.call('HDEL', P .. 'sizes', id)
  redis.call('DECRBY', P .. 'total', bytes)
end
local function purge(id)
  dropAll(id)
  redis.call('DEL', epKey(id), P .. 'pr:' .. id, P .. 'wc:' .. id)
  redis.call('ZREM', P .. 'index', id)
  redis.call('ZREM', P .. 'kept', id)
end
-- An instance saw ages up to 'known' in this partition, but Redis is behind: it lost writes
-- (a restart from an older snapshot, a failover to a lagging replica). No endpoint can have
-- lost more seqs than the partition lost ages, so every endpoint's numbering will move on by
-- that much (rbjump, applied to each endpoint at its next capture: APPEND).
local function lostWrites(known)
  local ages = tonumber(redis.call('GET', P .. 'agecounter') or '0')
  if known <= ages then return ages end
  redis.call('INCRBY', P .. 'rbjump', known - ages)
  redis.call('SET', P .. 'agecounter', known)
  return known
end
-- Keeps a capture's outcome under its idempotency key (APPEND, SETTLE): the newest ${REMEMBERED_CAPTURES}.
local function remember(ik, captureNo, outcome)
  redis.call('ZADD', ik, captureNo, outcome)
  redis.call('ZREMRANGEBYRANK', ik, 0, -${REMEMBERED_CAPTURES + 1})
  redis.call('PEXPIRE', ik, BACKSTOP_MS)
end
local function announceEvicted(id, throughSeq)
  publish(id, 'E\\n' .. ${lua(EVICTED_MESSAGE_HEAD)} .. throughSeq .. '}')
end
-- Evicts the partition's oldest requests while it is over its budget (or, 'force': Redis is
-- out of memory, whatever the budget), at most 'limit' of them, and only of the endpoints in
-- 'owners' (the ones the caller declared: it read the oldest first, EVICT); returns how many
-- went, and whether the partition is still over its budget.
local function evictOldest(limit, force, owners)
  local cfg = settings()
  local overhead, maxTotal = cfg.overhead, cfg.total
  local total = tonumber(redis.call('GET', P .. 'total') or '0')
  local evicted, evictedBy = 0, {}
  while (force or total > maxTotal) and evicted < limit do
    local oldest = redis.call('ZRANGE', P .. 'aged', 0, 0, 'WITHSCORES')
    if #oldest == 0 then break end
    local space = string.find(oldest[1], ' ', 1, true)
    local owner, ownerSeq = string.sub(oldest[1], 1, space - 1), tonumber(string.sub(oldest[1], space + 1))
    -- An endpoint the caller did not declare: its keys may live elsewhere (a slot on the move). Next call.
    if not owners[owner] then break end
    redis.call('ZREM', P .. 'aged', oldest[1])
    -- Only an owner's head can go (an entry of an endpoint whose keys expired unswept is skipped).
    if headSeq(owner) == ownerSeq then
      total = total - dropOldest(owner, overhead)
      evictedBy[owner] = ownerSeq
      evicted = evicted + 1
    end
  end
  for owner, through in pairs(evictedBy) do announceEvicted(owner, through) end
  if evicted > 0 then redis.call('INCRBY', P .. 'evicted', evicted) end
  return evicted, total > maxTotal
end
-- Keeps an endpoint's byte budget after it grew (a capture, a forward result): its oldest
-- requests go, never its last one, at most ${EVICT_BATCH} a call and its watchers told. Returns 1 when the
-- partition is then over its own budget: the caller evicts across endpoints next (EVICT), off the
-- capture's path. store.ts says the same for the memory and SQLite stores.
local function trimEndpoint(id, count, bytes, total, cfg)
  local evicted, throughSeq = 0, 0
  while bytes > cfg.perEp and count > 1 and evicted < ${EVICT_BATCH} do
    local freed
    freed, throughSeq = dropOldest(id, cfg.overhead)
    count, bytes, total, evicted = count - 1, bytes - freed, total - freed, evicted + 1
  end
  if evicted > 0 then
    announceEvicted(id, throughSeq)
    redis.call('INCRBY', P .. 'evicted', evicted)
  end
  return total > cfg.total and 1 or 0
end
`;

/** A script that may be refused whole when Redis is out of memory. */
const script = (body: string) => `#!lua\n${PRELUDE}${body}`;
/** A script that frees or reads, and must run when Redis is out of memory. */
const freeing = (body: string) => `#!lua flags=allow-oom\n${PRELUDE}${body}`;

/** ARGV[3..]: name, value pairs of the partition's settings -> the settings as they were before. */
export const CONFIGURE = freeing(`
local before = redis.call('HGETALL', P .. 'cfg')
redis.call('HSET', P .. 'cfg', unpack(ARGV, 3))
return before
`);

/** ARGV: id, endpointJson, responseJson, kind, ttlMs, maxEndpoints (of its kind, in this partition) -> 1 created, 2 id taken, 0 full. */
export const CREATE = script(`
local id = ARGV[3]
if alive(id) then return 2 end
purge(id)
local kept = redis.call('ZCOUNT', P .. 'kept', '(' .. NOW, '+inf')
local ofKind = ARGV[6] == 'kept' and kept or redis.call('ZCOUNT', P .. 'index', '(' .. NOW, '+inf') - kept
if ofKind >= tonumber(ARGV[8]) then return 0 end
local deadline = NOW + tonumber(ARGV[7])
redis.call('HSET', epKey(id), 'rec', ARGV[4], 'resp', ARGV[5], 'kind', ARGV[6], 'seq', 0, 'cleared', 0, 'rbj', redis.call('GET', P .. 'rbjump') or '0')
redis.call('ZADD', P .. 'index', deadline, id)
if ARGV[6] == 'kept' then redis.call('ZADD', P .. 'kept', deadline, id) end
backstop(id, deadline)
return 1
`);

/** ARGV: id -> [rec, resp, rv, responder token or false, NOW] or nil. */
export const GET = freeing(`
if not alive(ARGV[3]) then return nil end
local found = redis.call('HMGET', epKey(ARGV[3]), 'rec', 'resp', 'rv', 'rsp', 'rspu')
local responder = false
if found[4] and tonumber(found[5]) > NOW then responder = found[4] end
return {found[1], found[2], found[3] or '0', responder, NOW}
`);

/** ARGV: id, deletedMessage -> 1 when it was alive (its watchers told), 0 otherwise (removed either way). */
export const DELETE = freeing(`
local id = ARGV[3]
local was = alive(id)
purge(id)
if was then publish(id, 'X\\n' .. ARGV[4]) end
return was and 1 or 0
`);

/** ARGV: id, endpointJson, ttlMs, extendedMessage -> the new deadline (announced), or 0 for no living kept endpoint. */
export const EXTEND = freeing(`
local id = ARGV[3]
if not alive(id) or redis.call('HGET', epKey(id), 'kind') ~= 'kept' then return 0 end
local deadline = NOW + tonumber(ARGV[5])
redis.call('HSET', epKey(id), 'rec', ARGV[4])
redis.call('ZADD', P .. 'index', deadline, id)
redis.call('ZADD', P .. 'kept', deadline, id)
backstop(id, deadline)
publish(id, 'E\\n' .. ARGV[6])
return deadline
`);

/** -> endpoints of this partition alive now (a live one past its deadline but still held counts as alive until the next sweep looks). */
export const COUNT = freeing(`
return redis.call('ZCOUNT', P .. 'index', '(' .. NOW, '+inf')
`);

/** ARGV: id, responseJson, responseMessage -> 1 set (and announced), 0 no endpoint. */
export const SET_RESPONSE = script(`
local id = ARGV[3]
if not alive(id) then return 0 end
redis.call('HSET', epKey(id), 'resp', ARGV[4])
redis.call('HINCRBY', epKey(id), 'rv', 1)
-- A new configuration starts its rules' counts again.
local counts = {}
for rule = 0, ${MAX_RULES - 1} do table.insert(counts, 'rc' .. rule) end
redis.call('HDEL', epKey(id), unpack(counts))
publish(id, 'E\\n' .. ARGV[5])
return 1
`);

/**
 * ARGV: holder, leaseMs, graceMs, id... -> the ids that are gone. The holder's heartbeat moves to
 * NOW + leaseMs (one write, however many endpoints it holds), and it joins each live
 * endpoint's holders (a set member it already is, after the first time): the endpoints' own
 * deadlines follow the heartbeat only when they pass (alive()), not on every renewal.
 */
export const HOLD = freeing(`
local holder, leaseUntil = ARGV[3], NOW + tonumber(ARGV[4])
local beat = tonumber(redis.call('ZSCORE', P .. 'hb', holder))
if not beat or beat < leaseUntil then redis.call('ZADD', P .. 'hb', leaseUntil, holder) end
local gone = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  if not alive(id) then
    table.insert(gone, id)
  elseif not redis.call('ZSCORE', P .. 'pr:' .. id, holder) and redis.call('HGET', epKey(id), 'kind') == 'live' then
    redis.call('ZADD', P .. 'pr:' .. id, 0, holder)
    redis.call('HSET', epKey(id), 'grace', ARGV[5])
  end
end
return gone
`);

/** ARGV: id, instance, localCount -> sockets watching on every instance with a current heartbeat (announced as `watchers`), or nil. */
export const COUNT_WATCHERS = freeing(`
local id, instance, count = ARGV[3], ARGV[4], tonumber(ARGV[5])
if not alive(id) then return nil end
local counts = P .. 'wc:' .. id
if count > 0 then redis.call('HSET', counts, instance, count) else redis.call('HDEL', counts, instance) end
local flat = redis.call('HGETALL', counts)
local total = 0
for i = 1, #flat, 2 do
  local beat = tonumber(redis.call('ZSCORE', P .. 'hb', flat[i]))
  if flat[i] == instance or (beat and beat > NOW) then total = total + tonumber(flat[i + 1]) end
end
publish(id, 'E\\n{"type":"watchers","count":' .. total .. '}')
return total
`);

/** ARGV: id, holder, graceMs: the holder lets go; with no other holder beating, the endpoint lives a grace more. */
export const RELEASE = freeing(`
local id, holder = ARGV[3], ARGV[4]
if not alive(id) or redis.call('HGET', epKey(id), 'kind') ~= 'live' then return 0 end
local holders = P .. 'pr:' .. id
redis.call('ZREM', holders, holder)
local last = NOW
for _, other in ipairs(redis.call('ZRANGE', holders, 0, -1)) do
  local beat = tonumber(redis.call('ZSCORE', P .. 'hb', other))
  if beat and beat > last then last = beat end
end
redis.call('ZADD', P .. 'index', last + tonumber(ARGV[5]), id)
return 1
`);

/**
 * ARGV: id, draftJson, capturedAtMs, kind, rv, instance, captureNo, validUntil, floorSeq,
 * knownAge, then per answer choice (answer-rules.ts) its rule, times and answer JSON.
 *   -> [seq, the choice taken (from 0), 1 when a responder holds the endpoint, agecounter,
 *      1 when the partition is now over its budget (the caller evicts: EVICT)];
 *      nil when there is no endpoint of that kind;
 *      [resp, rv] (nothing stored) when the draft was built for another response version than
 *      the current one (rv '' accepts any), for the caller to build it again;
 *      'late' (nothing stored) when Redis runs it after validUntil (Redis's time), or after its
 *      caller settled it as failed (SETTLE): its sender has been answered 503 by then, so
 *      storing it would make a record that lies.
 * A capture this instance sent before (the same captureNo, its idempotency key: the instance
 * tried again after a cut) is not stored twice: its first seq and choice are returned.
 * floorSeq: the highest seq the instance knows was given on this endpoint; knownAge: the
 * highest age it has seen in the partition (its captures' replies, the requests its watchers
 * got). Either above what Redis holds means Redis lost writes: the seq moves past what was
 * handed out (lostWrites), so no seq is given to two requests.
 */
export const APPEND = script(`
local id, kind, instance, captureNo = ARGV[3], ARGV[6], ARGV[8], ARGV[9]
local deadline = alive(id)
if not deadline then return nil end
local cfg = settings()
local ep, rq = epKey(id), P .. 'rq:' .. id
local current = redis.call('HMGET', ep, 'kind', 'rv', 'rsp', 'rspu', 'seq', 'rbj')
if current[1] ~= kind then return nil end
local rv = current[2] or '0'
local responder = (current[3] and tonumber(current[4]) > NOW) and 1 or 0
-- Sent before (checked before 'late': the first try may have run in time)? Its first outcome.
local ik = P .. 'ik:' .. instance
local before = redis.call('ZRANGE', ik, captureNo, captureNo, 'BYSCORE')[1]
if before then
  local seq, choice = string.match(before, '^%d+:(%d+):(%d+)$')
  if not seq then return 'late' end
  return {tonumber(seq), tonumber(choice), responder, -1}
end
if NOW > tonumber(ARGV[10]) then return 'late' end
if ARGV[7] ~= '' and ARGV[7] ~= rv then return {redis.call('HGET', ep, 'resp'), rv} end
-- The first choice whose rule has answers left (times 0: no limit), counted here.
local choice = 0
local choices = (#ARGV - 12) / 3
for at = 0, choices - 1 do
  local rule, times = ARGV[13 + at * 3], tonumber(ARGV[14 + at * 3])
  choice = at
  if times == 0 then break end
  if redis.call('HINCRBY', ep, 'rc' .. rule, 1) <= times then break end
  redis.call('HINCRBY', ep, 'rc' .. rule, -1)
end
local answer = ARGV[15 + choice * 3]
local age = lostWrites(tonumber(ARGV[12])) + 1
redis.call('SET', P .. 'agecounter', age)
-- What the partition lost since this endpoint last caught up, on top of what this instance saw.
local jump = tonumber(redis.call('GET', P .. 'rbjump') or '0')
local floor = math.max(tonumber(ARGV[11]), tonumber(current[5]) + jump - tonumber(current[6] or jump))
if jump ~= tonumber(current[6] or '-1') then redis.call('HSET', ep, 'rbj', jump) end
-- Redis lost writes: numbering goes on past what was handed out. What it still holds keeps
-- its seqs (each entry carries its own), and the seqs lost are a gap.
if floor > tonumber(current[5]) then redis.call('HSET', ep, 'seq', floor) end
local seq = redis.call('HINCRBY', ep, 'seq', 1)
remember(ik, captureNo, captureNo .. ':' .. seq .. ':' .. choice)
local draft = ARGV[4]
local message
if #draft > 2 then
  message = ${lua(REQUEST_MESSAGE_HEAD)} .. seq .. ',' .. string.sub(draft, 2, -2) .. ',"answer":' .. answer .. '}}'
else
  message = ${lua(REQUEST_MESSAGE_HEAD)} .. seq .. ',"answer":' .. answer .. '}}'
end
local overhead = cfg.overhead
local cost = #message + overhead
redis.call('RPUSH', rq, message)
local count = redis.call('RPUSH', P .. 'sq:' .. id, seq)
-- New lists get the backstop expiry their endpoint's other keys got.
if count == 1 then
  redis.call('PEXPIREAT', rq, math.floor(deadline + BACKSTOP_MS))
  redis.call('PEXPIREAT', P .. 'sq:' .. id, math.floor(deadline + BACKSTOP_MS))
end
local bytes = redis.call('HINCRBY', P .. 'sizes', id, cost)
local total = redis.call('INCRBY', P .. 'total', cost)
redis.call('ZADD', P .. 'aged', age, id .. ' ' .. seq)
-- Announced before any trim, so watchers see the request, then what left.
publish(id, 'R ' .. seq .. ' ' .. ARGV[5] .. ' ' .. age .. '\\n' .. message)

while count > cfg.count do
  local freed = dropOldest(id, overhead)
  count, bytes, total = count - 1, bytes - freed, total - freed
end
return {seq, choice, responder, age, trimEndpoint(id, count, bytes, total, cfg)}
`);

/**
 * ARGV: instance, captureNo -> the seq the capture was stored under, or 0. Its sender was told
 * it failed (503): a copy of it still on its way is refused from now on ('late'), and when it
 * was stored already its caller marks the record (redis-store.ts), which then says what the
 * sender got.
 */
export const SETTLE = freeing(`
local ik, captureNo = P .. 'ik:' .. ARGV[3], ARGV[4]
local before = redis.call('ZRANGE', ik, captureNo, captureNo, 'BYSCORE')[1]
if not before then
  remember(ik, captureNo, captureNo .. ':late')
  return 0
end
return tonumber(string.match(before, '^%d+:(%d+):') or '0')
`);

/** ARGV: knownAge -> the partition's age counter, moved past what Redis lost when knownAge is ahead of it (run after a reconnect). */
export const CHECK_AGES = freeing(`
return lostWrites(tonumber(ARGV[3]))
`);

/**
 * ARGV: limit, force ('1': Redis is out of memory), owner ids... (the endpoints whose requests
 * are oldest, as the caller read them, every key of theirs declared) -> [requests evicted to
 * bring the partition within its budget, or to make room (at most limit); 1 when still over].
 */
export const EVICT = freeing(`
local owners = {}
for i = 5, #ARGV do owners[ARGV[i]] = true end
local evicted, over = evictOldest(tonumber(ARGV[3]), ARGV[4] == '1', owners)
return {evicted, over and 1 or 0}
`);

/**
 * ARGV: id, seq, answerJson, answeredMessage -> 1 when stored request seq's answer was
 * replaced (and announced), 0 when it is no longer stored.
 */
export const SET_ANSWER = script(`
local id, seq = ARGV[3], tonumber(ARGV[4])
if not alive(id) then return 0 end
local place = placeOf(id, seq)
if not place then return 0 end
local rq = P .. 'rq:' .. id
local message = redis.call('LINDEX', rq, place)
local at = nil
local from = 1
while true do
  local found = string.find(message, ${lua(',"answer":{')}, from, true)
  if not found then break end
  at, from = found, found + 1
end
if not at then return 0 end
local replaced = string.sub(message, 1, at - 1) .. ',"answer":' .. ARGV[5] .. '}}'
redis.call('LSET', rq, place, replaced)
local growth = #replaced - #message
redis.call('HINCRBY', P .. 'sizes', id, growth)
redis.call('INCRBY', P .. 'total', growth)
publish(id, 'E\\n' .. ARGV[6])
return 1
`);

/**
 * ARGV: id, token, forMs, action (claim, renew, release), responderMessage (claim),
 * noResponderMessage (release) -> 1 done, 0 no endpoint or (renew, release) not the holder.
 */
export const SET_RESPONDER = freeing(`
local id, token, leaseMs, action = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
if not alive(id) then return 0 end
local ep = epKey(id)
local current = redis.call('HMGET', ep, 'rsq', 'rsp')
local queue = current[1] and cjson.decode(current[1]) or {}
-- Claims oldest first (responder-claims.ts has the same rules): lapsed ones go, this token's is
-- renewed in place or taken out, and a new claim goes last.
local live, mine = {}, false
for _, claim in ipairs(queue) do
  if tonumber(claim[2]) > NOW then
    if claim[1] == token then
      mine = true
      if action == 'renew' then table.insert(live, {token, NOW + leaseMs}) end
    else
      table.insert(live, claim)
    end
  end
end
if action ~= 'claim' and not mine then return 0 end
if action == 'claim' then table.insert(live, {token, NOW + leaseMs}) end
while #live > ${MAX_RESPONDER_CLAIMS} do table.remove(live, 1) end
local holder = live[#live]
if holder then
  redis.call('HSET', ep, 'rsq', cjson.encode(live), 'rsp', holder[1], 'rspu', holder[2])
else
  redis.call('HDEL', ep, 'rsq', 'rsp', 'rspu')
end
local now = holder and holder[1] or false
if action == 'claim' or now ~= (current[2] or false) then
  publish(id, 'E\\n' .. (now and (ARGV[7] .. now .. '"}') or ARGV[8]))
end
return 1
`);

/** ARGV: id, afterSeq -> nil, or [lastSeq, clearedSeq, seq1, message1, forwarded1 or false, seq2, …]. */
export const READ_LOG = freeing(`
local id, after = ARGV[3], tonumber(ARGV[4])
if not alive(id) then return nil end
local counters = redis.call('HMGET', epKey(id), 'seq', 'cleared')
local result = {tonumber(counters[1]), tonumber(counters[2])}
local seqs = redis.call('LRANGE', P .. 'sq:' .. id, 0, -1)
-- The first stored request after 'after' (seqs grow along the list, with gaps).
local from = #seqs + 1
for i = #seqs, 1, -1 do
  if tonumber(seqs[i]) <= after then break end
  from = i
end
if from <= #seqs then
  local fw = P .. 'fw:' .. id
  for i, message in ipairs(redis.call('LRANGE', P .. 'rq:' .. id, from - 1, -1)) do
    local seq = seqs[from + i - 1]
    table.insert(result, tonumber(seq))
    table.insert(result, message)
    table.insert(result, redis.call('HGET', fw, seq))
  end
end
return result
`);

/**
 * ARGV: id, seq, forwardedMessage -> 1 kept (and announced), 2 kept and the partition is now
 * over its budget (the caller evicts: EVICT), 0 when the endpoint or that
 * request is no longer stored. The hash holds at most one per stored request (dropOldest takes
 * a request's with it), counted with it; a grown request is trimmed and evicted for like a new one.
 */
export const FORWARDED = script(`
local id, seq = ARGV[3], tonumber(ARGV[4])
local deadline = alive(id)
if not deadline then return 0 end
if not placeOf(id, seq) then return 0 end
local cfg = settings()
local fw = P .. 'fw:' .. id
-- Counted with its request (store.ts, storedCost): the growth against both budgets.
local growth = #ARGV[5] - #(redis.call('HGET', fw, seq) or '')
redis.call('HSET', fw, seq, ARGV[5])
backstop(id, deadline)
publish(id, 'E\\n' .. ARGV[5])
local bytes = redis.call('HINCRBY', P .. 'sizes', id, growth)
local total = redis.call('INCRBY', P .. 'total', growth)
return 1 + trimEndpoint(id, redis.call('LLEN', P .. 'sq:' .. id), bytes, total, cfg)
`);

/**
 * ARGV: id, seq -> 1 when stored request seq was deleted with its forward result (announced
 * `removed`), 0 when it is not stored, nil when there is no endpoint.
 */
export const DELETE_REQUEST = freeing(`
local id, seq = ARGV[3], tonumber(ARGV[4])
if not alive(id) then return nil end
local place = placeOf(id, seq)
if not place then return 0 end
local overhead = settings().overhead
local rq, sq = P .. 'rq:' .. id, P .. 'sq:' .. id
local length = #redis.call('LINDEX', rq, place)
-- A list loses an element from its middle by value: the message's place is marked first with
-- what no message is (the empty string), and that mark is what goes.
redis.call('LSET', rq, place, '')
redis.call('LREM', rq, 1, '')
redis.call('LREM', sq, 1, seq)
forgetRequest(id, seq, length, overhead)
publish(id, 'E\\n' .. ${lua(REMOVED_MESSAGE_HEAD)} .. seq .. '}')
return 1
`);

/** ARGV: id -> the new clearedSeq (announced), or nil. */
export const CLEAR = freeing(`
local id = ARGV[3]
if not alive(id) then return nil end
dropAll(id)
local seq = redis.call('HGET', epKey(id), 'seq')
redis.call('HSET', epKey(id), 'cleared', seq)
publish(id, 'E\\n' .. ${lua(CLEARED_MESSAGE_HEAD)} .. seq .. '}')
return tonumber(seq)
`);

/**
 * ARGV: ids... (endpoints past their deadline, as the caller read the index, every key of
 * theirs declared) -> endpoints removed (their watchers told `expired`). A live endpoint past its
 * deadline that an instance still holds is not removed: its deadline follows the heartbeat.
 * Heartbeats of instances gone for an hour are forgotten.
 */
export const SWEEP = freeing(`
local removed = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', P .. 'index', id) and not alive(id) then
    purge(id)
    publish(id, 'X\\n' .. ${lua(EXPIRED_MESSAGE)})
    removed = removed + 1
  end
end
redis.call('ZREMRANGEBYSCORE', P .. 'hb', '-inf', NOW - BACKSTOP_MS)
return removed
`);

/** -> [total bytes, evicted requests, agecounter]. */
export const STATS = freeing(`
return {tonumber(redis.call('GET', P .. 'total') or '0'), tonumber(redis.call('GET', P .. 'evicted') or '0'), tonumber(redis.call('GET', P .. 'agecounter') or '0')}
`);
