-- idempotency_release.lua: give an Idempotency-Key up, but only while the record is still our
-- own in-flight marker; a key taken over by another request, or completed, is left alone.
--
-- KEYS[1]  the record.
-- ARGV[1]  our in-flight marker, exactly as it was set.
--
-- Reply: the number of keys deleted, 1 or 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
