/**
 * The Redis store's server-side scripts. Each runs atomically, so a request is numbered, stored,
 * announced (PUBLISH from inside the script: announcements of one endpoint leave in seq order)
 * and trimmed in one step, and lifetimes, counts and byte budgets hold across instances.
 *
 * Keys, under the configured prefix P (ARGV[1]):
 *   P ep:<id>   hash: rec (endpoint JSON without response), resp (response JSON), kind, seq, cleared, bytes
 *   P rq:<id>   list: the stored `request` messages, oldest first
 *   P rs:<id>   list: "<seq> <cost>" for each message, in step with rq
 *   P pr:<id>   sorted set: instance id -> end of its lease (live endpoints)
 *   P wc:<id>   hash: instance id -> sockets watching on it
 *   P index     sorted set: endpoint id -> deadline (ms); alive while the deadline is ahead
 *   P kept      sorted set: the kept endpoints' ids -> deadline, for counting them apart
 *   P sizes     hash: endpoint id -> bytes held, P total: bytes held by all, P evicted: count
 *   P aged      sorted set: "<id> <seq>" -> age, for evicting the oldest requests across endpoints
 *   P ch:<id>   pub/sub channel: "R <seq> <capturedAtMs>\n<message>" or "E\n<message>"
 * Per-endpoint keys are built inside the scripts, so they run on one Redis (or a primary with
 * replicas, or Sentinel), not on Redis Cluster. Every per-endpoint key also expires an hour
 * after the deadline, as a backstop for a deployment where no instance sweeps any more.
 */

const PRELUDE = `
local P = ARGV[1]
local BACKSTOP_MS = 3600000
local function epKey(id) return P .. 'ep:' .. id end
local function alive(id, now)
  local deadline = redis.call('ZSCORE', P .. 'index', id)
  return deadline and tonumber(deadline) > now
end
local function backstop(id, deadline)
  local at = math.floor(deadline + BACKSTOP_MS)
  for _, key in ipairs({epKey(id), P .. 'rq:' .. id, P .. 'rs:' .. id, P .. 'pr:' .. id, P .. 'wc:' .. id}) do
    redis.call('PEXPIREAT', key, at)
  end
end
local function splitEntry(entry)
  local space = string.find(entry, ' ', 1, true)
  return tonumber(string.sub(entry, 1, space - 1)), tonumber(string.sub(entry, space + 1))
end
-- Removes the endpoint's oldest stored request; returns its seq.
local function dropOldest(id)
  redis.call('LPOP', P .. 'rq:' .. id)
  local seq, cost = splitEntry(redis.call('LPOP', P .. 'rs:' .. id))
  redis.call('HINCRBY', epKey(id), 'bytes', -cost)
  redis.call('HINCRBY', P .. 'sizes', id, -cost)
  redis.call('DECRBY', P .. 'total', cost)
  redis.call('ZREM', P .. 'aged', id .. ' ' .. seq)
  return seq
end
-- Removes every stored request of the endpoint.
local function dropAll(id)
  for _, entry in ipairs(redis.call('LRANGE', P .. 'rs:' .. id, 0, -1)) do
    local seq = splitEntry(entry)
    redis.call('ZREM', P .. 'aged', id .. ' ' .. seq)
  end
  local bytes = tonumber(redis.call('HGET', P .. 'sizes', id) or '0')
  redis.call('DECRBY', P .. 'total', bytes)
  redis.call('HSET', P .. 'sizes', id, 0)
  redis.call('DEL', P .. 'rq:' .. id, P .. 'rs:' .. id)
  redis.call('HSET', epKey(id), 'bytes', 0)
end
local function purge(id)
  dropAll(id)
  redis.call('HDEL', P .. 'sizes', id)
  redis.call('DEL', epKey(id), P .. 'pr:' .. id, P .. 'wc:' .. id)
  redis.call('ZREM', P .. 'index', id)
  redis.call('ZREM', P .. 'kept', id)
end
local function announceEvicted(id, throughSeq)
  redis.call('PUBLISH', P .. 'ch:' .. id, 'E\\n{"type":"evicted","throughSeq":' .. throughSeq .. '}')
end
`;

const script = (body: string) => PRELUDE + body;

/** ARGV: P, id, endpointJson, responseJson, kind, deadline, now, maxEndpoints (of its kind) -> 1 created, 0 refused. */
export const CREATE = script(`
local id, now = ARGV[2], tonumber(ARGV[7])
if alive(id, now) then return 0 end
if redis.call('EXISTS', epKey(id)) == 1 then purge(id) end
local kept = redis.call('ZCOUNT', P .. 'kept', '(' .. now, '+inf')
local ofKind = ARGV[5] == 'kept' and kept or redis.call('ZCOUNT', P .. 'index', '(' .. now, '+inf') - kept
if ofKind >= tonumber(ARGV[8]) then return 0 end
redis.call('HSET', epKey(id), 'rec', ARGV[3], 'resp', ARGV[4], 'kind', ARGV[5], 'seq', 0, 'cleared', 0, 'bytes', 0)
redis.call('ZADD', P .. 'index', ARGV[6], id)
if ARGV[5] == 'kept' then redis.call('ZADD', P .. 'kept', ARGV[6], id) end
redis.call('HSET', P .. 'sizes', id, 0)
backstop(id, tonumber(ARGV[6]))
return 1
`);

/** ARGV: P, id, now -> [rec, resp] or nil. */
export const GET = script(`
if not alive(ARGV[2], tonumber(ARGV[3])) then return nil end
return redis.call('HMGET', epKey(ARGV[2]), 'rec', 'resp')
`);

/** ARGV: P, id, now -> 1 when it was alive, 0 otherwise (removed either way). */
export const DELETE = script(`
local id = ARGV[2]
local was = alive(id, tonumber(ARGV[3]))
if redis.call('EXISTS', epKey(id)) == 1 or redis.call('ZSCORE', P .. 'index', id) then purge(id) end
return was and 1 or 0
`);

/** ARGV: P, now -> endpoints alive. */
export const COUNT = script(`
return redis.call('ZCOUNT', P .. 'index', '(' .. ARGV[2], '+inf')
`);

/** ARGV: P, id, now, responseJson -> 1 set, 0 no endpoint. */
export const SET_RESPONSE = script(`
if not alive(ARGV[2], tonumber(ARGV[3])) then return 0 end
redis.call('HSET', epKey(ARGV[2]), 'resp', ARGV[4])
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
 * overheadBytes -> the new seq, or nil when there is no endpoint.
 */
export const APPEND = script(`
local id, now = ARGV[2], tonumber(ARGV[3])
if not alive(id, now) then return nil end
local draft = ARGV[4]
local seq = redis.call('HINCRBY', epKey(id), 'seq', 1)
local message
if #draft > 2 then
  message = '{"type":"request","request":{"seq":' .. seq .. ',' .. string.sub(draft, 2) .. '}'
else
  message = '{"type":"request","request":{"seq":' .. seq .. '}}'
end
local cost = #message + tonumber(ARGV[9])
redis.call('RPUSH', P .. 'rq:' .. id, message)
redis.call('RPUSH', P .. 'rs:' .. id, seq .. ' ' .. cost)
redis.call('HINCRBY', epKey(id), 'bytes', cost)
redis.call('HINCRBY', P .. 'sizes', id, cost)
redis.call('INCRBY', P .. 'total', cost)
redis.call('ZADD', P .. 'aged', redis.call('INCR', P .. 'agecounter'), id .. ' ' .. seq)
-- Announced before any trim, so watchers see the request, then what left.
redis.call('PUBLISH', P .. 'ch:' .. id, 'R ' .. seq .. ' ' .. ARGV[5] .. '\\n' .. message)

local rs = P .. 'rs:' .. id
while redis.call('LLEN', rs) > tonumber(ARGV[6]) do dropOldest(id) end
local evicted, throughSeq = 0, 0
while tonumber(redis.call('HGET', epKey(id), 'bytes')) > tonumber(ARGV[7]) and redis.call('LLEN', rs) > 1 do
  throughSeq = dropOldest(id)
  evicted = evicted + 1
end
if evicted > 0 then announceEvicted(id, throughSeq) end

-- The store-wide budget: the oldest requests of any endpoint go first.
local maxTotal = tonumber(ARGV[8])
local evictedBy = {}
while tonumber(redis.call('GET', P .. 'total')) > maxTotal do
  local oldest = redis.call('ZPOPMIN', P .. 'aged')
  if #oldest == 0 then break end
  local space = string.find(oldest[1], ' ', 1, true)
  local owner, ownerSeq = string.sub(oldest[1], 1, space - 1), tonumber(string.sub(oldest[1], space + 1))
  local head = redis.call('LINDEX', P .. 'rs:' .. owner, 0)
  if head and splitEntry(head) == ownerSeq then
    evictedBy[owner] = dropOldest(owner)
    evicted = evicted + 1
  end
end
for owner, through in pairs(evictedBy) do announceEvicted(owner, through) end
if evicted > 0 then redis.call('INCRBY', P .. 'evicted', evicted) end
return seq
`);

/** ARGV: P, id, now, afterSeq -> nil, or [lastSeq, clearedSeq, seq1, message1, seq2, message2, …]. */
export const READ_LOG = script(`
local id, after = ARGV[2], tonumber(ARGV[4])
if not alive(id, tonumber(ARGV[3])) then return nil end
local counters = redis.call('HMGET', epKey(id), 'seq', 'cleared')
local result = {tonumber(counters[1]), tonumber(counters[2])}
local entries = redis.call('LRANGE', P .. 'rs:' .. id, 0, -1)
local first = nil
for i, entry in ipairs(entries) do
  if splitEntry(entry) > after then first = i break end
end
if first then
  local messages = redis.call('LRANGE', P .. 'rq:' .. id, first - 1, -1)
  for i, message in ipairs(messages) do
    local seq = splitEntry(entries[first + i - 1])
    table.insert(result, seq)
    table.insert(result, message)
  end
end
return result
`);

/** ARGV: P, id, now -> the new clearedSeq, or nil. */
export const CLEAR = script(`
local id = ARGV[2]
if not alive(id, tonumber(ARGV[3])) then return nil end
dropAll(id)
local seq = redis.call('HGET', epKey(id), 'seq')
redis.call('HSET', epKey(id), 'cleared', seq)
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
