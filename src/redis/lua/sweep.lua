--! flags=allow-oom
-- ARGV: ids... (endpoints past their deadline, as the caller read the index, every key of
-- theirs declared) -> endpoints removed (their watchers told `expired`). A live endpoint past its
-- deadline that an instance still holds is not removed: its deadline follows the heartbeat.
-- Heartbeats of instances gone for an hour are forgotten.
local removed = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', P .. 'index', id) and not alive(id) then
    purge(id)
    publish(id, 'X\n' .. {{EXPIRED_MESSAGE}})
    removed = removed + 1
  end
end
redis.call('ZREMRANGEBYSCORE', P .. 'hb', '-inf', NOW - BACKSTOP_MS)
return removed
