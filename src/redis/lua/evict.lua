--! flags=allow-oom
-- ARGV: limit, force ('1': Redis is out of memory), owner ids... (the endpoints whose requests
-- are oldest, as the caller read them, every key of theirs declared) -> [requests evicted to
-- bring the partition within its budget, or to make room (at most limit); 1 when still over].
local limit, force = tonumber(ARGV[3]), ARGV[4] == '1'
local owners = {}
for i = 5, #ARGV do owners[ARGV[i]] = true end
local evicted, over = evictOldest(limit, force, owners)
return {evicted, over and 1 or 0}
