-- idempotency_complete.lua: store an Idempotency-Key's finished response, but only while the
-- record is still our own in-flight marker, so that a request whose lock expired cannot
-- overwrite the record of the request that took the key over.
--
-- KEYS[1]  the record.
-- ARGV[1]  our in-flight marker, exactly as it was set.
-- ARGV[2]  the finished record.
-- ARGV[3]  its TTL in milliseconds.
--
-- Reply: 1 when stored, 0 when the marker was gone (nothing changed).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
