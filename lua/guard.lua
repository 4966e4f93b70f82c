-- guard.lua: the fraud guard's calls besides a decision, on the guard hashes that
-- sliding_log.lua keeps (its header describes their fields).
--
-- KEYS[1..n]  guard hashes.
-- ARGV[1]     mode: "approve" adds one approval, weighed by ARGV[3], to each hash's counts,
--             both horizons, and during a block pays back as much of the solved sends the
--             block admitted (bu); "lift" ends each hash's block, forgets its recent horizon
--             (the recent counts leave the baseline too), the unapproved sends of its long
--             horizon and the countries it asked for, so the target starts afresh.
-- ARGV[2]     now in microseconds, or "" for the server clock (TIME); only tests set it.
-- ARGV[3]     for "approve", the approval's weight in [0, 1]: one that came implausibly fast
--             after its send, or from another network than the send's, counts for less.
-- ARGV[4]     for "approve", how many approvals over the long horizon make a country
--             established: a country with fewer is young.
-- ARGV[5..]   for "approve", each key's role, as sliding_log.lua's: "" none, "c" a country,
--             "y" the young-countries pool, which counts the approval only when the
--             country of the call (an earlier key) is young.
--
-- A hash that has counted no send is left alone: an approval for it (a verification created
-- before the guard watched its target) has nothing to weigh against, and a lift of a block
-- that never counted removes the block only.
--
-- Reply: how many hashes changed.

local call, tonumber, fmt, exp = redis.call, tonumber, string.format, math.exp
local mode, nowstr, weight, youngapprovals = ARGV[1], ARGV[2], tonumber(ARGV[3]) or 1, tonumber(ARGV[4]) or 0
if nowstr == '' then
  local t = call('TIME')
  nowstr = t[1] .. ('00000' .. t[2]):sub(-6)
end
local now = tonumber(nowstr)

-- decimal writes a count as every Redis's Lua reads it back: '%.9g', with a point before an
-- exponent, since the embedded Redis of dev mode (gopher-lua) reads a number without a point
-- as an integer and '1e-06' as nil.
local function decimal(x)
  local s = fmt('%.9g', x)
  if not s:find('.', 1, true) then s = s:gsub('e', '.0e', 1) end
  return s
end

local changed, young = 0, false
for i = 1, #KEYS do
  local key, role = KEYS[i], ARGV[4 + i] or ''
  local h = {}
  if role ~= 'y' or young then h = call('HMGET', key, 'ss', 'as', 'sl', 'al', 't', 'hs', 'hl', 'nc', 'b', 'bu') end
  if mode == 'lift' and call('HDEL', key, 'b', 'm', 'bu') > 0 and not h[5] then changed = changed + 1 end
  local t = tonumber(h[5])
  if t then
    local dt = now - t
    if dt < 0 then dt = 0 end
    local fs, fl = exp(-dt / tonumber(h[6])), exp(-dt / tonumber(h[7]))
    local ss, as, sl, al = tonumber(h[1]) * fs, tonumber(h[2]) * fs, tonumber(h[3]) * fl, tonumber(h[4]) * fl
    local nc = (tonumber(h[8]) or 0) * fl
    if role == 'c' and al < youngapprovals then young = true end
    if mode == 'approve' then
      as, al = as + weight, al + weight
    else
      sl, al = sl - ss, al - as
      if al < 0 then al = 0 end
      if sl > al then sl = al end
      ss, as, nc = 0, 0, 0
    end
    -- An approval during a block pays back one of the solved sends it admitted: a real
    -- user of a blocked target makes room for the next.
    local bu = mode == 'approve' and tonumber(h[10]) or 0
    if bu > 0 and (tonumber(h[9]) or 0) > now then
      bu = bu - weight
      if bu < 0 then bu = 0 end
    end
    call('HSET', key, 'ss', decimal(ss), 'as', decimal(as), 'sl', decimal(sl),
      'al', decimal(al), 'nc', decimal(nc), 't', nowstr, 'bu', decimal(bu))
    changed = changed + 1
  end
end
return changed
