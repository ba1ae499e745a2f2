-- ARGV: id, seq, answerJson, answeredMessage -> 1 when stored request seq's answer was
-- replaced (and announced), 0 when it is no longer stored.
local id, seq, answerJson, answeredMessage = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
if not alive(id) then return 0 end
local place = placeOf(id, seq)
if not place then return 0 end
local rq = P .. 'rq:' .. id
local element = redis.call('LINDEX', rq, place)
local replaced
if string.sub(element, 1, 1) == '{' then
  -- A whole v1 message, stored before records were bytes: its answer is its record's last field.
  local at = nil
  local from = 1
  while true do
    local found = string.find(element, {{ANSWER_FIELD}}, from, true)
    if not found then break end
    at, from = found, found + 1
  end
  if not at then return 0 end
  replaced = string.sub(element, 1, at - 1) .. ',"answer":' .. answerJson .. '}}'
else
  -- An element (store/stored-request.ts): the answer's length and JSON, then the record, kept as it is.
  local answerLength = struct.unpack('>I4', element)
  replaced = struct.pack('>I4', #answerJson) .. answerJson .. string.sub(element, 5 + answerLength)
end
redis.call('LSET', rq, place, replaced)
local growth = #replaced - #element
redis.call('HINCRBY', P .. 'sizes', id, growth)
redis.call('INCRBY', P .. 'total', growth)
publish(id, 'E\n' .. answeredMessage)
return 1
