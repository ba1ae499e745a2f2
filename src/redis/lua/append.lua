-- ARGV: id, record (the capture's bytes: store/stored-request.ts), capturedAtMs, kind, rv, instance, captureNo, validUntil, floorSeq,
-- knownAge, then per answer choice (answer-rules.ts) its rule, times and answer JSON.
--   -> [seq, the choice taken (from 0), 1 when a responder holds the endpoint, agecounter,
--      1 when the partition is now over its budget (the caller evicts: EVICT)];
--      nil when there is no endpoint of that kind;
--      [resp, rv] (nothing stored) when the draft was built for another response version than
--      the current one (rv '' accepts any), for the caller to build it again;
--      'late' (nothing stored) when Redis runs it after validUntil (Redis's time), or after its
--      caller settled it as failed (SETTLE): its sender has been answered 503 by then, so
--      storing it would make a record that lies.
-- A capture this instance sent before (the same captureNo, its idempotency key: the instance
-- tried again after a cut) is not stored twice: its first seq and choice are returned.
-- floorSeq: the highest seq the instance knows was given on this endpoint; knownAge: the
-- highest age it has seen in the partition (its captures' replies, the requests its watchers
-- got). Either above what Redis holds means Redis lost writes: the seq moves past what was
-- handed out (lostWrites), so no seq is given to two requests.
local id, record, capturedAt, kind, version = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local instance, captureNo, validUntil, floorSeq, knownAge = ARGV[8], ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
-- Then the answer choices, three arguments each from ARGV[13]: rule, times, answer JSON.
local CHOICES_FROM = 13
local deadline = alive(id)
if not deadline then return nil end
local cfg = settings()
local ep, rq = epKey(id), P .. 'rq:' .. id
local current = redis.call('HMGET', ep, 'kind', 'rv', 'rsp', 'rspu', 'seq', 'rbj')
if current[1] ~= kind then return nil end
local rv = current[2] or '0'
local responder = (current[3] and tonumber(current[4]) > NOW) and 1 or 0
-- Sent before (checked before 'late': the first try may have run in time)? Its first outcome.
local ik = P .. 'ik:' .. instance
local before = redis.call('ZRANGE', ik, captureNo, captureNo, 'BYSCORE')[1]
if before then
  local seq, choice = string.match(before, '^%d+:(%d+):(%d+)$')
  if not seq then return 'late' end
  return {tonumber(seq), tonumber(choice), responder, -1}
end
if NOW > validUntil then return 'late' end
if version ~= '' and version ~= rv then return {redis.call('HGET', ep, 'resp'), rv} end
-- The first choice whose rule has answers left (times 0: no limit), counted here.
local choice = 0
local choices = (#ARGV - CHOICES_FROM + 1) / 3
for at = 0, choices - 1 do
  local rule, times = ARGV[CHOICES_FROM + at * 3], tonumber(ARGV[CHOICES_FROM + 1 + at * 3])
  choice = at
  if times == 0 then break end
  if redis.call('HINCRBY', ep, 'rc' .. rule, 1) <= times then break end
  redis.call('HINCRBY', ep, 'rc' .. rule, -1)
end
local answer = ARGV[CHOICES_FROM + 2 + choice * 3]
local age = lostWrites(knownAge) + 1
redis.call('SET', P .. 'agecounter', age)
-- What the partition lost since this endpoint last caught up, on top of what this instance saw.
local jump = tonumber(redis.call('GET', P .. 'rbjump') or '0')
local floor = math.max(floorSeq, tonumber(current[5]) + jump - tonumber(current[6] or jump))
if jump ~= tonumber(current[6] or '-1') then redis.call('HSET', ep, 'rbj', jump) end
-- Redis lost writes: numbering goes on past what was handed out. What it still holds keeps
-- its seqs (each entry carries its own), and the seqs lost are a gap.
if floor > tonumber(current[5]) then redis.call('HSET', ep, 'seq', floor) end
local seq = redis.call('HINCRBY', ep, 'seq', 1)
remember(ik, captureNo, captureNo .. ':' .. seq .. ':' .. choice)
-- The stored element: the answer's length and JSON, then the record as the capture encoded it.
local element = struct.pack('>I4', #answer) .. answer .. record
local overhead = cfg.overhead
local cost = #element + overhead
redis.call('RPUSH', rq, element)
local count = redis.call('RPUSH', P .. 'sq:' .. id, seq)
-- New lists get the backstop expiry their endpoint's other keys got.
if count == 1 then
  redis.call('PEXPIREAT', rq, math.floor(deadline + BACKSTOP_MS))
  redis.call('PEXPIREAT', P .. 'sq:' .. id, math.floor(deadline + BACKSTOP_MS))
end
local bytes = redis.call('HINCRBY', P .. 'sizes', id, cost)
local total = redis.call('INCRBY', P .. 'total', cost)
redis.call('ZADD', P .. 'aged', age, id .. ' ' .. seq)
-- Announced before any trim, so watchers see the request, then what left.
publish(id, 'R ' .. seq .. ' ' .. capturedAt .. ' ' .. age .. '\n' .. element)

while count > cfg.count do
  local freed = dropOldest(id, overhead)
  count, bytes, total = count - 1, bytes - freed, total - freed
end
return {seq, choice, responder, age, trimEndpoint(id, count, bytes, total, cfg)}
