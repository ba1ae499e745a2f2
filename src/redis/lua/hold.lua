--! flags=allow-oom
-- ARGV: holder, leaseMs, graceMs, id... -> the ids that are gone. The holder's heartbeat moves to
-- NOW + leaseMs (one write, however many endpoints it holds), and it joins each live
-- endpoint's holders (a set member it already is, after the first time): the endpoints' own
-- deadlines follow the heartbeat only when they pass (alive()), not on every renewal.
local holder, leaseUntil, graceMs = ARGV[3], NOW + tonumber(ARGV[4]), ARGV[5]
-- Then the ids, from ARGV[6].
local beat = tonumber(redis.call('ZSCORE', P .. 'hb', holder))
if not beat or beat < leaseUntil then redis.call('ZADD', P .. 'hb', leaseUntil, holder) end
local gone = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  if not alive(id) then
    table.insert(gone, id)
  elseif not redis.call('ZSCORE', P .. 'pr:' .. id, holder) and redis.call('HGET', epKey(id), 'kind') == 'live' then
    redis.call('ZADD', P .. 'pr:' .. id, 0, holder)
    redis.call('HSET', epKey(id), 'grace', graceMs)
  end
end
return gone
