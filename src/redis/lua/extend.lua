--! flags=allow-oom
-- ARGV: id, endpointJson, ttlMs, extendedMessage -> the new deadline (announced), or 0 for no living kept endpoint.
local id, endpointJson, ttlMs, extendedMessage = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
if not alive(id) or redis.call('HGET', epKey(id), 'kind') ~= 'kept' then return 0 end
local deadline = NOW + ttlMs
redis.call('HSET', epKey(id), 'rec', endpointJson)
redis.call('ZADD', P .. 'index', deadline, id)
redis.call('ZADD', P .. 'kept', deadline, id)
backstop(id, deadline)
publish(id, 'E\n' .. extendedMessage)
return deadline
