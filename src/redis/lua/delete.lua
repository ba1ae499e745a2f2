--! flags=allow-oom
-- ARGV: id, deletedMessage -> 1 when it was alive (its watchers told), 0 otherwise (removed either way).
local id, deletedMessage = ARGV[3], ARGV[4]
local was = alive(id)
purge(id)
if was then publish(id, 'X\n' .. deletedMessage) end
return was and 1 or 0
