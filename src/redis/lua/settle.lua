--! flags=allow-oom
-- ARGV: instance, captureNo -> the seq the capture was stored under, or 0. Its sender was told
-- it failed (503): a copy of it still on its way is refused from now on ('late'), and when it
-- was stored already its caller marks the record (redis/store.ts), which then says what the
-- sender got.
local instance, captureNo = ARGV[3], ARGV[4]
local ik = P .. 'ik:' .. instance
local before = redis.call('ZRANGE', ik, captureNo, captureNo, 'BYSCORE')[1]
if not before then
  remember(ik, captureNo, captureNo .. ':late')
  return 0
end
return tonumber(string.match(before, '^%d+:(%d+):') or '0')
