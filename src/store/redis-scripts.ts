/**
 * The Redis store's server-side scripts. Each runs atomically, so a request is numbered, stored,
 * announced (PUBLISH from inside the script: announcements of one endpoint leave in seq order)
 * and trimmed in one step, and lifetimes, counts and byte budgets hold across instances.
 *
 * Keys, under the configured prefix P (ARGV[1]):
 *   P ep:<id>   hash: rec (endpoint JSON without response), resp (response JSON), rv (resp's
 *               version, counted up by each change), kind, seq, cleared; rc<i>: answers rule i
 *               gave since the configuration was set; rsp, rspu: the responder's token and the
 *               end of its claim
 *   P rq:<id>   list: the stored `request` messages, oldest first: the seqs up to the hash's
 *               seq, without holes (requests only ever leave from the head, or all at once), so
 *               each one's seq follows from its place, and its cost from its length
 *   P pr:<id>   sorted set: instance id -> end of its lease (live endpoints)
 *   P wc:<id>   hash: instance id -> sockets watching on it
 *   P index     sorted set: endpoint id -> deadline (ms); alive while the deadline is ahead
 *   P kept      sorted set: the kept endpoints' ids -> deadline, for counting them apart
 *   P sizes     hash: endpoint id -> bytes its stored requests cost. Apart from the endpoint's
 *               keys and without expiry, so an endpoint whose keys expired before any sweep
 *               still gives its bytes back to P total when it is swept.
 *   P total     bytes held by all endpoints;  P evicted: requests evicted so far
 *   P aged      sorted set: "<id> <seq>" -> age, for evicting the oldest requests across endpoints
 *   P ch:<id>   pub/sub channel: "R <seq> <capturedAtMs>\n<message>" or "E\n<message>"
 * Per-endpoint keys are built inside the scripts, so they run on one Redis (or a primary with
 * replicas, or Sentinel), not on Redis Cluster. Every per-endpoint key also expires an hour
 * after the deadline, as a backstop for a deployment where no instance sweeps any more.
 */

import { EVICTED_MESSAGE_HEAD, REQUEST_MESSAGE_HEAD } from '../shared/protocol.js';
import { CLEARED_MESSAGE_HEAD } from '../shared/server-messages.js';
import { MAX_RULES } from '../shared/answer-rules.js';

/** A Lua string literal of `text` (JSON's escapes are Lua's too). */
const lua = (text: string): string => JSON.stringify(text);

const PRELUDE = `
local P = ARGV[1]
local BACKSTOP_MS = 3600000
local function epKey(id) return P .. 'ep:' .. id end
-- The endpoint's deadline when it is alive at 'now', else nil.
local function alive(id, now)
  local deadline = tonumber(redis.call('ZSCORE', P .. 'index', id))
  if deadline and deadline > now then return deadline end
  return nil
end
local function backstop(id, deadline)
  local at = math.floor(deadline + BACKSTOP_MS)
  for _, key in ipairs({epKey(id), P .. 'rq:' .. id, P .. 'pr:' .. id, P .. 'wc:' .. id, P .. 'fw:' .. id}) do
    redis.call('PEXPIREAT', key, at)
  end
end
-- The seq of the endpoint's oldest stored request (its list holds the seqs up to the last given,
-- without holes); nil when the endpoint's hash is gone. 'last': its hash's seq, when the caller
-- has read it already.
local function headSeq(id, last)
  last = last or redis.call('HGET', epKey(id), 'seq')
  if not last then return nil end
  return tonumber(last) - redis.call('LLEN', P .. 'rq:' .. id) + 1
end
-- Removes the endpoint's oldest stored request, whose seq is 'seq'; returns the bytes it cost.
local function dropOldest(id, seq, overhead)
  local cost = #redis.call('LPOP', P .. 'rq:' .. id) + overhead
  redis.call('HINCRBY', P .. 'sizes', id, -cost)
  redis.call('DECRBY', P .. 'total', cost)
  redis.call('ZREM', P .. 'aged', id .. ' ' .. seq)
  return cost
end
-- Removes every stored request of the endpoint. Without its hash (its keys expired before a
-- sweep) the age index keeps their entries; the store-wide eviction skips those.
local function dropAll(id)
  local last = redis.call('HGET', epKey(id), 'seq')
  local head = headSeq(id, last)
  if head then
    last = tonumber(last)
    local members = {}
    for seq = head, last do
      table.insert(members, id .. ' ' .. seq)
      if #members == 1000 then redis.call('ZREM', P .. 'aged', unpack(members)) members = {} end
    end
    if #members > 0 then redis.call('ZREM', P .. 'aged', unpack(members)) end
  end
  redis.call('DECRBY', P .. 'total', tonumber(redis.call('HGET', P .. 'sizes', id) or '0'))
  redis.call('HSET', P .. 'sizes', id, 0)
  redis.call('DEL', P .. 'rq:' .. id, P .. 'fw:' .. id)
end
local function purge(id)
  dropAll(id)
  redis.call('HDEL', P .. 'sizes', id)
  redis.call('DEL', epKey(id), P .. 'pr:' .. id, P .. 'wc:' .. id)
  redis.call('ZREM', P .. 'index', id)
  redis.call('ZREM', P .. 'kept', id)
end
local function announceEvicted(id, throughSeq)
  redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ${lua(EVICTED_MESSAGE_HEAD)} .. throughSeq .. '}')
end
`;

const script = (body: string) => PRELUDE + body;

/** ARGV: P, id, endpointJson, responseJson, kind, deadline, now, maxEndpoints (of its kind) -> 1 created, 2 id taken, 0 full. */
export const CREATE = script(`
local id, now = ARGV[2], tonumber(ARGV[7])
if alive(id, now) then return 2 end
purge(id)
local kept = redis.call('ZCOUNT', P .. 'kept', '(' .. now, '+inf')
local ofKind = ARGV[5] == 'kept' and kept or redis.call('ZCOUNT', P .. 'index', '(' .. now, '+inf') - kept
if ofKind >= tonumber(ARGV[8]) then return 0 end
redis.call('HSET', epKey(id), 'rec', ARGV[3], 'resp', ARGV[4], 'kind', ARGV[5], 'seq', 0, 'cleared', 0)
redis.call('ZADD', P .. 'index', ARGV[6], id)
if ARGV[5] == 'kept' then redis.call('ZADD', P .. 'kept', ARGV[6], id) end
backstop(id, tonumber(ARGV[6]))
return 1
`);

/** ARGV: P, id, now -> [rec, resp, rv] or nil. */
export const GET = script(`
if not alive(ARGV[2], tonumber(ARGV[3])) then return nil end
local found = redis.call('HMGET', epKey(ARGV[2]), 'rec', 'resp', 'rv')
found[3] = found[3] or '0'
return found
`);

/** ARGV: P, id, now, deletedMessage -> 1 when it was alive (its watchers told), 0 otherwise (removed either way). */
export const DELETE = script(`
local id = ARGV[2]
local was = alive(id, tonumber(ARGV[3]))
purge(id)
if was then redis.call('PUBLISH', P .. 'ch:' .. id, 'X\\n' .. ARGV[4]) end
return was and 1 or 0
`);

/** ARGV: P, id, now, endpointJson, deadline, extendedMessage -> 1 extended (and announced), 0 no living kept endpoint. */
export const EXTEND = script(`
local id, deadline = ARGV[2], tonumber(ARGV[5])
if not alive(id, tonumber(ARGV[3])) or redis.call('HGET', epKey(id), 'kind') ~= 'kept' then return 0 end
redis.call('HSET', epKey(id), 'rec', ARGV[4])
redis.call('ZADD', P .. 'index', deadline, id)
redis.call('ZADD', P .. 'kept', deadline, id)
backstop(id, deadline)
redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ARGV[6])
return 1
`);

/** ARGV: P, now -> endpoints alive. */
export const COUNT = script(`
return redis.call('ZCOUNT', P .. 'index', '(' .. ARGV[2], '+inf')
`);

/** ARGV: P, id, now, responseJson, responseMessage -> 1 set (and announced), 0 no endpoint. */
export const SET_RESPONSE = script(`
if not alive(ARGV[2], tonumber(ARGV[3])) then return 0 end
redis.call('HSET', epKey(ARGV[2]), 'resp', ARGV[4])
redis.call('HINCRBY', epKey(ARGV[2]), 'rv', 1)
-- A new configuration starts its rules' counts again.
local counts = {}
for rule = 0, ${MAX_RULES - 1} do table.insert(counts, 'rc' .. rule) end
redis.call('HDEL', epKey(ARGV[2]), unpack(counts))
redis.call('PUBLISH', P .. 'ch:' .. ARGV[2], 'E\\n' .. ARGV[5])
return 1
`);

/** ARGV: P, now, instance, leaseUntil, grace, id... -> the ids that are gone. */
export const HOLD = script(`
local now, instance, leaseUntil, grace = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local gone = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  local deadline = redis.call('ZSCORE', P .. 'index', id)
  if not deadline or tonumber(deadline) <= now then
    table.insert(gone, id)
  elseif redis.call('HGET', epKey(id), 'kind') == 'live' then
    redis.call('ZADD', P .. 'pr:' .. id, leaseUntil, instance)
    local extended = math.max(tonumber(deadline), leaseUntil + grace)
    redis.call('ZADD', P .. 'index', extended, id)
    backstop(id, extended)
  end
end
return gone
`);

/** ARGV: P, id, now, instance, localCount -> sockets watching on every instance with a current lease, or nil. */
export const COUNT_WATCHERS = script(`
local id, now, instance, count = ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
if not alive(id, now) then return nil end
local counts = P .. 'wc:' .. id
if count > 0 then redis.call('HSET', counts, instance, count) else redis.call('HDEL', counts, instance) end
local flat = redis.call('HGETALL', counts)
local total = 0
for i = 1, #flat, 2 do
  local lease = redis.call('ZSCORE', P .. 'pr:' .. id, flat[i])
  if flat[i] == instance or (lease and tonumber(lease) > now) then total = total + tonumber(flat[i + 1]) end
end
return total
`);

/** ARGV: P, id, now, instance, grace. */
export const RELEASE = script(`
local id, now, grace = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[5])
if not alive(id, now) or redis.call('HGET', epKey(id), 'kind') ~= 'live' then return 0 end
local leases = P .. 'pr:' .. id
redis.call('ZREM', leases, ARGV[4])
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
local last = now
local newest = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
if newest[2] then last = math.max(now, tonumber(newest[2])) end
redis.call('ZADD', P .. 'index', last + grace, id)
return 1
`);

/**
 * ARGV: P, id, now, draftJson, capturedAtMs, requestsPerEndpoint, maxPerEndpoint, maxTotal,
 * overheadBytes, kind, rv, then per answer choice (answer-rules.ts) its rule, times and answer
 * JSON -> [seq, the choice taken (from 0), 1 when a responder holds the endpoint]; nil when
 * there is no endpoint of that kind; or, when the draft was built for another response version
 * than the current one (rv '' accepts any), nothing stored and [resp, rv] returned, for the
 * caller to build it again.
 */
export const APPEND = script(`
local id, now = ARGV[2], tonumber(ARGV[3])
local deadline = alive(id, now)
if not deadline then return nil end
local ep, rq, overhead = epKey(id), P .. 'rq:' .. id, tonumber(ARGV[9])
local current = redis.call('HMGET', ep, 'kind', 'rv', 'rsp', 'rspu')
if current[1] ~= ARGV[10] then return nil end
local rv = current[2] or '0'
if ARGV[11] ~= '' and ARGV[11] ~= rv then return {redis.call('HGET', ep, 'resp'), rv} end
local responder = (current[3] and tonumber(current[4]) > now) and 1 or 0
-- The first choice whose rule has answers left (times 0: no limit), counted here.
local choice = 0
local choices = (#ARGV - 11) / 3
for at = 0, choices - 1 do
  local rule, times = ARGV[12 + at * 3], tonumber(ARGV[13 + at * 3])
  choice = at
  if times == 0 then break end
  if redis.call('HINCRBY', ep, 'rc' .. rule, 1) <= times then break end
  redis.call('HINCRBY', ep, 'rc' .. rule, -1)
end
local answer = ARGV[14 + choice * 3]
local draft = ARGV[4]
local seq = redis.call('HINCRBY', ep, 'seq', 1)
local message
if #draft > 2 then
  message = ${lua(REQUEST_MESSAGE_HEAD)} .. seq .. ',' .. string.sub(draft, 2, -2) .. ',"answer":' .. answer .. '}}'
else
  message = ${lua(REQUEST_MESSAGE_HEAD)} .. seq .. ',"answer":' .. answer .. '}}'
end
local cost = #message + overhead
local count = redis.call('RPUSH', rq, message)
-- A new list gets the backstop expiry its endpoint's other keys got at creation.
if count == 1 then redis.call('PEXPIREAT', rq, math.floor(deadline + BACKSTOP_MS)) end
local bytes = redis.call('HINCRBY', P .. 'sizes', id, cost)
local total = redis.call('INCRBY', P .. 'total', cost)
redis.call('ZADD', P .. 'aged', redis.call('INCR', P .. 'agecounter'), id .. ' ' .. seq)
-- Announced before any trim, so watchers see the request, then what left.
redis.call('PUBLISH', P .. 'ch:' .. id, 'R ' .. seq .. ' ' .. ARGV[5] .. '\\n' .. message)

-- The endpoint's oldest stored request has seq (seq - count + 1).
local maxCount = tonumber(ARGV[6])
while count > maxCount do
  local freed = dropOldest(id, seq - count + 1, overhead)
  count, bytes, total = count - 1, bytes - freed, total - freed
end
local evicted, throughSeq = 0, 0
local maxBytes = tonumber(ARGV[7])
while bytes > maxBytes and count > 1 do
  throughSeq = seq - count + 1
  local freed = dropOldest(id, throughSeq, overhead)
  count, bytes, total, evicted = count - 1, bytes - freed, total - freed, evicted + 1
end
if evicted > 0 then announceEvicted(id, throughSeq) end

-- The store-wide budget: the oldest requests of any endpoint go first.
local maxTotal = tonumber(ARGV[8])
local evictedBy = {}
while total > maxTotal do
  local oldest = redis.call('ZPOPMIN', P .. 'aged')
  if #oldest == 0 then break end
  local space = string.find(oldest[1], ' ', 1, true)
  local owner, ownerSeq = string.sub(oldest[1], 1, space - 1), tonumber(string.sub(oldest[1], space + 1))
  -- Only an owner's head can go (an entry of an endpoint whose keys expired unswept is skipped).
  if headSeq(owner) == ownerSeq then
    total = total - dropOldest(owner, ownerSeq, overhead)
    evictedBy[owner] = ownerSeq
    evicted = evicted + 1
  end
end
for owner, through in pairs(evictedBy) do announceEvicted(owner, through) end
if evicted > 0 then redis.call('INCRBY', P .. 'evicted', evicted) end
return {seq, choice, responder}
`);

/**
 * ARGV: P, id, now, seq, answerJson, answeredMessage -> 1 when stored request seq's answer was
 * replaced (and announced), 0 when it is no longer stored.
 */
export const SET_ANSWER = script(`
local id, seq = ARGV[2], tonumber(ARGV[4])
if not alive(id, tonumber(ARGV[3])) then return 0 end
local last = tonumber(redis.call('HGET', epKey(id), 'seq'))
local head = headSeq(id, last)
if not head or seq < head or seq > last then return 0 end
local rq = P .. 'rq:' .. id
local message = redis.call('LINDEX', rq, seq - head)
local at = nil
local from = 1
while true do
  local found = string.find(message, ${lua(',"answer":{')}, from, true)
  if not found then break end
  at, from = found, found + 1
end
if not at then return 0 end
local replaced = string.sub(message, 1, at - 1) .. ',"answer":' .. ARGV[5] .. '}}'
redis.call('LSET', rq, seq - head, replaced)
local growth = #replaced - #message
redis.call('HINCRBY', P .. 'sizes', id, growth)
redis.call('INCRBY', P .. 'total', growth)
redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ARGV[6])
return 1
`);

/**
 * ARGV: P, id, now, token, untilMs, action (claim, renew, release), responderMessage (claim),
 * noResponderMessage (release) -> 1 done, 0 no endpoint or (renew, release) not the holder.
 */
export const SET_RESPONDER = script(`
local id, now, token, action = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[6]
if not alive(id, now) then return 0 end
local ep = epKey(id)
local current = redis.call('HMGET', ep, 'rsp', 'rspu')
local holds = current[1] == token and tonumber(current[2]) > now
if action == 'claim' then
  redis.call('HSET', ep, 'rsp', token, 'rspu', ARGV[5])
  redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ARGV[7])
  return 1
end
if not holds then return 0 end
if action == 'renew' then
  redis.call('HSET', ep, 'rspu', ARGV[5])
else
  redis.call('HDEL', ep, 'rsp', 'rspu')
  redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ARGV[8])
end
return 1
`);

/** ARGV: P, id, now, afterSeq -> nil, or [lastSeq, clearedSeq, seq1, message1, forwarded1 or false, seq2, …]. */
export const READ_LOG = script(`
local id, after = ARGV[2], tonumber(ARGV[4])
if not alive(id, tonumber(ARGV[3])) then return nil end
local counters = redis.call('HMGET', epKey(id), 'seq', 'cleared')
local last = tonumber(counters[1])
local result = {last, tonumber(counters[2])}
local head = headSeq(id, last) or last + 1
local from = math.max(head, after + 1)
if from <= last then
  local fw = P .. 'fw:' .. id
  for i, message in ipairs(redis.call('LRANGE', P .. 'rq:' .. id, from - head, -1)) do
    table.insert(result, from + i - 1)
    table.insert(result, message)
    table.insert(result, redis.call('HGET', fw, from + i - 1))
  end
end
return result
`);
/**
 * ARGV: P, id, now, seq, forwardedMessage -> 1 kept (and announced), 0 when the endpoint or that
 * request is no longer stored. Forward results of requests trimmed since go at the same time, so
 * the hash holds at most one per stored request.
 */
export const FORWARDED = script(`
local id, seq = ARGV[2], tonumber(ARGV[4])
local deadline = alive(id, tonumber(ARGV[3]))
if not deadline then return 0 end
local last = tonumber(redis.call('HGET', epKey(id), 'seq'))
local head = headSeq(id, last)
if not head or seq < head or seq > last then return 0 end
local fw = P .. 'fw:' .. id
for _, stored in ipairs(redis.call('HKEYS', fw)) do
  if tonumber(stored) < head then redis.call('HDEL', fw, stored) end
end
redis.call('HSET', fw, seq, ARGV[5])
backstop(id, deadline)
redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ARGV[5])
return 1
`);

/** ARGV: P, id, now -> the new clearedSeq (announced), or nil. */
export const CLEAR = script(`
local id = ARGV[2]
if not alive(id, tonumber(ARGV[3])) then return nil end
dropAll(id)
local seq = redis.call('HGET', epKey(id), 'seq')
redis.call('HSET', epKey(id), 'cleared', seq)
redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n' .. ${lua(CLEARED_MESSAGE_HEAD)} .. seq .. '}')
return tonumber(seq)
`);

/** ARGV: P, now, limit -> endpoints removed. */
export const SWEEP = script(`
local expired = redis.call('ZRANGEBYSCORE', P .. 'index', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(expired) do purge(id) end
return #expired
`);

/** ARGV: P -> [total bytes, evicted requests]. */
export const STATS = script(`
return {tonumber(redis.call('GET', P .. 'total') or '0'), tonumber(redis.call('GET', P .. 'evicted') or '0')}
`);
