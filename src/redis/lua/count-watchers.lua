--! flags=allow-oom
-- ARGV: id, instance, localCount -> sockets watching on every instance with a current heartbeat (announced as `watchers`), or nil.
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
publish(id, 'E\n{"type":"watchers","count":' .. total .. '}')
return total
