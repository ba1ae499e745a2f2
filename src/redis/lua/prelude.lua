-- Shared by every script (redis/scripts.ts puts it first): the partition, the clock, and the
-- helpers that keep the request log's rules (store.ts and src/log/rulebook.ts say the same).
-- ARGV[1]: the partition's prefix with its hash tag (P); ARGV[2]: a test's clock, or '' for Redis's.
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
-- instance writes them again and runs it once more (redis/store.ts): never built-in defaults.
local function settings()
  local c = redis.call('HMGET', P .. 'cfg', 'count', 'perEp', 'total', 'overhead')
  if not c[1] then error({err = {{NO_SETTINGS}}}) end
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
-- counts what it cost (element bytes 'length', log/rulebook.ts, storedCost) off the budgets.
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
-- Keeps a capture's outcome under its idempotency key (APPEND, SETTLE): the newest {{REMEMBERED_CAPTURES}}.
-- The oldest go a batch at a time (every 64th capture number), not one per capture; the set
-- outlives its instance by the backstop, its expiry moved on with each batch.
local function remember(ik, captureNo, outcome)
  if redis.call('ZADD', ik, captureNo, outcome) == 1 and tonumber(captureNo) % 64 ~= 0 then
    redis.call('PEXPIRE', ik, BACKSTOP_MS, 'NX')
    return
  end
  redis.call('ZREMRANGEBYRANK', ik, 0, -{{REMEMBERED_CAPTURES}} - 1)
  redis.call('PEXPIRE', ik, BACKSTOP_MS)
end
local function announceEvicted(id, throughSeq)
  publish(id, 'E\n' .. {{EVICTED_MESSAGE_HEAD}} .. throughSeq .. '}')
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
-- requests go, never its last one, at most {{EVICT_BATCH}} a call and its watchers told. Returns 1 when the
-- partition is then over its own budget: the caller evicts across endpoints next (EVICT), off the
-- capture's path. store.ts says the same for the memory and SQLite stores.
local function trimEndpoint(id, count, bytes, total, cfg)
  local evicted, throughSeq = 0, 0
  while bytes > cfg.perEp and count > 1 and evicted < {{EVICT_BATCH}} do
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
