--! flags=allow-oom
-- ARGV: id, token, forMs, action (claim, renew, release), responderMessage (claim),
-- noResponderMessage (release) -> 1 done, 0 no endpoint or (renew, release) not the holder.
local id, token, leaseMs, action, responderHead, noResponderMessage = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
if not alive(id) then return 0 end
local ep = epKey(id)
local current = redis.call('HMGET', ep, 'rsq', 'rsp')
local queue = current[1] and cjson.decode(current[1]) or {}
-- Claims oldest first (responder-claims.ts has the same rules): lapsed ones go, this token's is
-- renewed in place or taken out, and a new claim goes last.
local live, mine = {}, false
for _, claim in ipairs(queue) do
  if tonumber(claim[2]) > NOW then
    if claim[1] == token then
      mine = true
      if action == 'renew' then table.insert(live, {token, NOW + leaseMs}) end
    else
      table.insert(live, claim)
    end
  end
end
if action ~= 'claim' and not mine then return 0 end
if action == 'claim' then table.insert(live, {token, NOW + leaseMs}) end
while #live > {{MAX_RESPONDER_CLAIMS}} do table.remove(live, 1) end
local holder = live[#live]
if holder then
  redis.call('HSET', ep, 'rsq', cjson.encode(live), 'rsp', holder[1], 'rspu', holder[2])
else
  redis.call('HDEL', ep, 'rsq', 'rsp', 'rspu')
end
local now = holder and holder[1] or false
if action == 'claim' or now ~= (current[2] or false) then
  publish(id, 'E\n' .. (now and (responderHead .. now .. '"}') or noResponderMessage))
end
return 1
