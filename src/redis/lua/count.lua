--! flags=allow-oom
-- -> endpoints of this partition alive now (a live one past its deadline but still held counts as alive until the next sweep looks).
return redis.call('ZCOUNT', P .. 'index', '(' .. NOW, '+inf')
