-- sliding_log.lua: otpgate's limiter, a sliding-window log over one sorted set per key,
-- deciding a request against every rule of every key at once.
--
-- Each key is a sorted set whose members are request ids and whose scores are the times of
-- the requests in microseconds. A request at score s counts for a rule of window w while
-- now - w < s; entries after now (left behind by a clock step back) count too, so that a
-- step back never admits more. Scores and windows are whole microseconds, so "s > now - w"
-- is written as the inclusive bound now - w + 1.
--
-- KEYS[1..n]  the sorted sets, one per limit of the policy.
-- ARGV[1]     mode: "allow" records the request in every key if every rule admits it, and in
--             none otherwise; "peek" records nothing; "undo" removes the request id from every
--             key first. Only "allow" trims entries older than a key's longest window.
-- ARGV[2]     the request id. "allow" answers "replayed" without recording when a key already
--             holds it: a client retry of a call that reached Redis must not count twice.
-- ARGV[3]     now in microseconds, or "" for the server clock (TIME); only tests set it.
-- ARGV[4..]   per key, in KEYS order: its rule count r, then r pairs of limit and window (µs).
--
-- Reply: a flat array of integers, {status, then per rule in ARGV order: used, reset, retry}.
--   status  0 denied: nothing recorded, the state before the request;
--           1 allowed: recorded, the state after recording;
--           2 replayed: already recorded by an earlier call, the current state;
--           3 reported: after "peek" or "undo", the current state.
--   used    entries inside the rule's window.
--   reset   microseconds until the oldest of them leaves the window (0 when none).
--   retry   microseconds until the rule admits one more request (0 when it would now).

local mode, id = ARGV[1], ARGV[2]
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end

-- The script runs on every request, so it allocates little: no table per key or rule, only
-- what Redis replies. It reads the newest entries of each key, one more than the key's
-- largest limit (capped, for huge limits): a window holds a suffix of the score order, so
-- they answer every rule without a call per rule.
local CAP = 100
local at, z, more = {}, {}, {} -- per key: ARGV index of its rule count, newest entries, older ones exist

local a = 4
for i = 1, #KEYS do
  at[i] = a
  local r = tonumber(ARGV[a])
  if mode == 'undo' then redis.call('ZREM', KEYS[i], id) end
  local fetch = 0
  for j = a + 1, a + 2 * r, 2 do
    fetch = math.max(fetch, tonumber(ARGV[j]))
  end
  if r > 0 then
    fetch = math.min(fetch, CAP) + 1
    local raw = redis.call('ZRANGE', KEYS[i], -fetch, -1, 'WITHSCORES') -- id, score, id, ...
    for j = 2, #raw, 2 do raw[j] = tonumber(raw[j]) end
    z[i], more[i] = raw, #raw >= 2 * fetch
  else
    z[i], more[i] = {}, false
  end
  a = a + 1 + 2 * r
end

-- count returns how many entries of key i lie inside a window of win microseconds.
local function count(i, win)
  local raw, lo, c = z[i], now - win, 0
  for j = #raw, 2, -2 do
    if raw[j] <= lo then return c end
    c = c + 1
  end
  if not more[i] then return c end
  return redis.call('ZCOUNT', KEYS[i], lo + 1, '+inf')
end

-- state reports one rule of key i: used, reset, retry.
local function state(i, limit, win)
  local raw, n = z[i], count(i, win)
  if n == 0 then return 0, 0, 0 end
  local m, oldest, retry = #raw / 2, nil, 0
  if n <= m then
    oldest = raw[2 * (m - n + 1)]
  else
    oldest = tonumber(redis.call('ZRANGEBYSCORE', KEYS[i], now - win + 1, '+inf',
      'WITHSCORES', 'LIMIT', 0, 1)[2])
  end
  if n >= limit then
    -- One more fits once n - limit + 1 entries have left: the limit-th newest is the last.
    local last
    if limit <= m then
      last = raw[2 * (m - limit + 1)]
    else
      last = tonumber(redis.call('ZRANGE', KEYS[i], -limit, -limit, 'WITHSCORES')[2])
    end
    retry = last + win - now
  end
  return n, oldest + win - now, retry
end

local status = 3
if mode == 'allow' then
  status = 1
  for i = 1, #KEYS do
    local raw = z[i]
    for j = #raw - 1, 1, -2 do
      if raw[j] == id then status = 2 end
    end
    if status == 1 and more[i] and redis.call('ZSCORE', KEYS[i], id) then status = 2 end
  end
  if status == 1 then
    for i = 1, #KEYS do
      a = at[i]
      for j = a + 1, a + 2 * tonumber(ARGV[a]), 2 do
        if count(i, tonumber(ARGV[j + 1])) >= tonumber(ARGV[j]) then status = 0 end
      end
    end
  end
  for i = 1, #KEYS do
    a = at[i]
    local raw, maxwin = z[i], 0
    for j = a + 2, a + 2 * tonumber(ARGV[a]), 2 do
      maxwin = math.max(maxwin, tonumber(ARGV[j]))
    end
    local cut = now - maxwin
    if more[i] or (raw[2] and raw[2] <= cut) then
      redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cut)
    end
    if status == 1 then
      redis.call('ZADD', KEYS[i], now, id)
      redis.call('PEXPIRE', KEYS[i], math.ceil(maxwin / 1000))
      -- Keep the entries in score order: the new one is the newest unless the clock stepped back.
      local j = #raw
      while j > 0 and raw[j] > now do
        raw[j + 1], raw[j + 2] = raw[j - 1], raw[j]
        j = j - 2
      end
      raw[j + 1], raw[j + 2] = id, now
    end
  end
end

local reply = {status}
for i = 1, #KEYS do
  a = at[i]
  for j = a + 1, a + 2 * tonumber(ARGV[a]), 2 do
    local n, reset, retry = state(i, tonumber(ARGV[j]), tonumber(ARGV[j + 1]))
    reply[#reply + 1] = n
    reply[#reply + 1] = reset
    reply[#reply + 1] = retry
  end
end
return reply
