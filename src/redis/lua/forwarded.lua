-- ARGV: id, seq, forwardedMessage -> 1 kept (and announced), 2 kept and the partition is now
-- over its budget (the caller evicts: EVICT), 0 when the endpoint or that
-- request is no longer stored. The hash holds at most one per stored request (dropOldest takes
-- a request's with it), counted with it; a grown request is trimmed and evicted for like a new one.
local id, seq, report = ARGV[3], tonumber(ARGV[4]), ARGV[5]
local deadline = alive(id)
if not deadline then return 0 end
if not placeOf(id, seq) then return 0 end
local cfg = settings()
local fw = P .. 'fw:' .. id
-- Counted with its request (store.ts, storedCost): the growth against both budgets.
local growth = #report - #(redis.call('HGET', fw, seq) or '')
redis.call('HSET', fw, seq, report)
backstop(id, deadline)
publish(id, 'E\n' .. report)
local bytes = redis.call('HINCRBY', P .. 'sizes', id, growth)
local total = redis.call('INCRBY', P .. 'total', growth)
return 1 + trimEndpoint(id, redis.call('LLEN', P .. 'sq:' .. id), bytes, total, cfg)
