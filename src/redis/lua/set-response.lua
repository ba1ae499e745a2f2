-- ARGV: id, responseJson, responseMessage -> 1 set (and announced), 0 no endpoint.
local id, responseJson, responseMessage = ARGV[3], ARGV[4], ARGV[5]
if not alive(id) then return 0 end
redis.call('HSET', epKey(id), 'resp', responseJson)
redis.call('HINCRBY', epKey(id), 'rv', 1)
-- A new configuration starts its rules' counts again.
local counts = {}
for rule = 0, {{MAX_RULES}} - 1 do table.insert(counts, 'rc' .. rule) end
redis.call('HDEL', epKey(id), unpack(counts))
publish(id, 'E\n' .. responseMessage)
return 1
