-- ARGV: id, seq, answerJson, answeredMessage -> 1 when stored request seq's answer was
-- replaced (and announced), 0 when it is no longer stored.
local id, seq, answerJson, answeredMessage = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
if not alive(id) then return 0 end
local place = placeOf(id, seq)
if not place then return 0 end
local rq = P .. 'rq:' .. id
local element = redis.call('LINDEX', rq, place)
-- An element (store/stored-request.ts): the answer's length and JSON, then the record, kept as it is.
local answerLength = struct.unpack('>I4', element)
local replaced = struct.pack('>I4', #answerJson) .. answerJson .. string.sub(element, 5 + answerLength)
redis.call('LSET', rq, place, replaced)
local growth = #replaced - #element
redis.call('HINCRBY', P .. 'sizes', id, growth)
redis.call('INCRBY', P .. 'total', growth)
publish(id, 'E\n' .. answeredMessage)
return 1
