--! flags=allow-oom
-- -> [total bytes, evicted requests, agecounter].
return {tonumber(redis.call('GET', P .. 'total') or '0'), tonumber(redis.call('GET', P .. 'evicted') or '0'), tonumber(redis.call('GET', P .. 'agecounter') or '0')}
