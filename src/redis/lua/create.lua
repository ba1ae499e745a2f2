-- ARGV: id, endpointJson, responseJson, kind, ttlMs, maxEndpoints (of its kind, in this partition) -> 1 created, 2 id taken, 0 full.
local id, endpointJson, responseJson, kind, ttlMs, maxOfKind = ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
if alive(id) then return 2 end
purge(id)
local kept = redis.call('ZCOUNT', P .. 'kept', '(' .. NOW, '+inf')
local ofKind = kind == 'kept' and kept or redis.call('ZCOUNT', P .. 'index', '(' .. NOW, '+inf') - kept
if ofKind >= maxOfKind then return 0 end
local deadline = NOW + ttlMs
redis.call('HSET', epKey(id), 'rec', endpointJson, 'resp', responseJson, 'kind', kind, 'seq', 0, 'cleared', 0, 'rbj', redis.call('GET', P .. 'rbjump') or '0')
redis.call('ZADD', P .. 'index', deadline, id)
if kind == 'kept' then redis.call('ZADD', P .. 'kept', deadline, id) end
backstop(id, deadline)
return 1
