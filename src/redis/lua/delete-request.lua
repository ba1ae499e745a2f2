--! flags=allow-oom
-- ARGV: id, seq -> 1 when stored request seq was deleted with its forward result (announced
-- `removed`), 0 when it is not stored, nil when there is no endpoint.
local id, seq = ARGV[3], tonumber(ARGV[4])
if not alive(id) then return nil end
local place = placeOf(id, seq)
if not place then return 0 end
local overhead = settings().overhead
local rq, sq = P .. 'rq:' .. id, P .. 'sq:' .. id
local length = #redis.call('LINDEX', rq, place)
-- A list loses an element from its middle by value: the message's place is marked first with
-- what no message is (the empty string), and that mark is what goes.
redis.call('LSET', rq, place, '')
redis.call('LREM', rq, 1, '')
redis.call('LREM', sq, 1, seq)
forgetRequest(id, seq, length, overhead)
publish(id, 'E\n' .. {{REMOVED_MESSAGE_HEAD}} .. seq .. '}')
return 1
