--! flags=allow-oom
-- ARGV: knownAge -> the partition's age counter, moved past what Redis lost when knownAge is ahead of it (run after a reconnect).
local knownAge = tonumber(ARGV[3])
return lostWrites(knownAge)
