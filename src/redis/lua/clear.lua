--! flags=allow-oom
-- ARGV: id -> the new clearedSeq (announced), or nil.
local id = ARGV[3]
if not alive(id) then return nil end
dropAll(id)
local seq = redis.call('HGET', epKey(id), 'seq')
redis.call('HSET', epKey(id), 'cleared', seq)
publish(id, 'E\n' .. {{CLEARED_MESSAGE_HEAD}} .. seq .. '}')
return tonumber(seq)
