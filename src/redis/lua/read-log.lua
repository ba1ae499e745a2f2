--! flags=allow-oom
-- ARGV: id, afterSeq -> nil, or [lastSeq, clearedSeq, seq1, message1, forwarded1 or false, seq2, …].
local id, after = ARGV[3], tonumber(ARGV[4])
if not alive(id) then return nil end
local counters = redis.call('HMGET', epKey(id), 'seq', 'cleared')
local result = {tonumber(counters[1]), tonumber(counters[2])}
local seqs = redis.call('LRANGE', P .. 'sq:' .. id, 0, -1)
-- The first stored request after 'after' (seqs grow along the list, with gaps).
local from = #seqs + 1
for i = #seqs, 1, -1 do
  if tonumber(seqs[i]) <= after then break end
  from = i
end
if from <= #seqs then
  local fw = P .. 'fw:' .. id
  for i, message in ipairs(redis.call('LRANGE', P .. 'rq:' .. id, from - 1, -1)) do
    local seq = seqs[from + i - 1]
    table.insert(result, tonumber(seq))
    table.insert(result, message)
    table.insert(result, redis.call('HGET', fw, seq))
  end
end
return result
