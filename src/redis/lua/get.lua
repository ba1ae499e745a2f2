--! flags=allow-oom
-- ARGV: id -> [rec, resp, rv, responder token or false, NOW] or nil.
local id = ARGV[3]
if not alive(id) then return nil end
local found = redis.call('HMGET', epKey(id), 'rec', 'resp', 'rv', 'rsp', 'rspu')
local responder = false
if found[4] and tonumber(found[5]) > NOW then responder = found[4] end
return {found[1], found[2], found[3] or '0', responder, NOW}
