--! flags=allow-oom
-- ARGV[3..]: name, value pairs of the partition's settings -> the settings as they were before.
local before = redis.call('HGETALL', P .. 'cfg')
redis.call('HSET', P .. 'cfg', unpack(ARGV, 3))
return before
