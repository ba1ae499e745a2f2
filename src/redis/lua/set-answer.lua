-- ARGV: id, seq, answerJson, answeredMessage -> 1 when stored request seq's answer was
-- replaced (and announced), 0 when it is no longer stored.
local id, seq, answerJson, answeredMessage = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
if not alive(id) then return 0 end
local place = placeOf(id, seq)
if not place then return 0 end
local rq = P .. 'rq:' .. id
local message = redis.call('LINDEX', rq, place)
local at = nil
local from = 1
while true do
  local found = string.find(message, {{ANSWER_FIELD}}, from, true)
  if not found then break end
  at, from = found, found + 1
end
if not at then return 0 end
local replaced = string.sub(message, 1, at - 1) .. ',"answer":' .. answerJson .. '}}'
redis.call('LSET', rq, place, replaced)
local growth = #replaced - #message
redis.call('HINCRBY', P .. 'sizes', id, growth)
redis.call('INCRBY', P .. 'total', growth)
publish(id, 'E\n' .. answeredMessage)
return 1
