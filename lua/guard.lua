-- guard.lua: the fraud guard's calls besides a decision, on the guard hashes that
-- sliding_log.lua keeps (its header describes their fields).
--
-- KEYS[1..n]  guard hashes.
-- ARGV[1]     mode: "approve" adds one approval to each hash's counts, both horizons;
--             "lift" ends each hash's block and forgets its recent horizon (the recent counts
--             leave the baseline too), so the target starts afresh.
-- ARGV[2]     now in microseconds, or "" for the server clock (TIME); only tests set it.
--
-- A hash that has counted no send is left alone: an approval for it (a verification created
-- before the guard watched its target) has nothing to weigh against, and a lift of a block
-- that never counted removes the block only.
--
-- Reply: how many hashes changed.

local call, tonumber, fmt, exp = redis.call, tonumber, string.format, math.exp
local mode, nowstr = ARGV[1], ARGV[2]
if nowstr == '' then
  local t = call('TIME')
  nowstr = t[1] .. ('00000' .. t[2]):sub(-6)
end
local now = tonumber(nowstr)

local changed = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  local h = call('HMGET', key, 'ss', 'as', 'sl', 'al', 't', 'hs', 'hl')
  if mode == 'lift' and call('HDEL', key, 'b', 'm') > 0 and not h[5] then changed = changed + 1 end
  local t = tonumber(h[5])
  if t then
    local dt = now - t
    if dt < 0 then dt = 0 end
    local fs, fl = exp(-dt / tonumber(h[6])), exp(-dt / tonumber(h[7]))
    local ss, as, sl, al = tonumber(h[1]) * fs, tonumber(h[2]) * fs, tonumber(h[3]) * fl, tonumber(h[4]) * fl
    if mode == 'approve' then
      as, al = as + 1, al + 1
    else
      sl, al = sl - ss, al - as
      if sl < 0 then sl = 0 end
      if al < 0 then al = 0 end
      ss, as = 0, 0
    end
    call('HSET', key, 'ss', fmt('%.9g', ss), 'as', fmt('%.9g', as), 'sl', fmt('%.9g', sl),
      'al', fmt('%.9g', al), 't', nowstr)
    changed = changed + 1
  end
end
return changed
