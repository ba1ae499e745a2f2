--! flags=allow-oom
-- ARGV: id, holder, graceMs: the holder lets go; with no other holder beating, the endpoint lives a grace more.
local id, holder, graceMs = ARGV[3], ARGV[4], tonumber(ARGV[5])
if not alive(id) or redis.call('HGET', epKey(id), 'kind') ~= 'live' then return 0 end
local holders = P .. 'pr:' .. id
redis.call('ZREM', holders, holder)
local last = NOW
for _, other in ipairs(redis.call('ZRANGE', holders, 0, -1)) do
  local beat = tonumber(redis.call('ZSCORE', P .. 'hb', other))
  if beat and beat > last then last = beat end
end
redis.call('ZADD', P .. 'index', last + graceMs, id)
return 1
