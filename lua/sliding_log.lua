-- sliding_log.lua: otpgate's limiter, a sliding-window log over one sorted set per key,
-- deciding a request against every rule of every key at once.
--
-- Each key is a sorted set whose members are request ids and whose scores are the times of
-- the requests in microseconds. A request at score s counts for a rule of window w while
-- now - w < s; entries after now (left behind by a clock step back) count too, so that a
-- step back never admits more. Scores are whole microseconds, so "s > now - w" is written as
-- the inclusive bound now - w + 1. A key expires one longest window after the last request
-- it recorded.
--
-- KEYS[1..n]  the sorted sets, one per limit of the policy.
-- ARGV[1]     mode: "allow" records the request in every key if every rule admits it, and in
--             none otherwise; "peek" records nothing; "undo" removes the request id from every
--             key first. Only "allow" trims entries older than a key's longest window.
-- ARGV[2]     the request id. "allow" answers "replayed" without recording when a key already
--             holds it: a client retry of a call that reached Redis must not count twice.
-- ARGV[3]     now in microseconds, or "" for the server clock (TIME); only tests set it.
-- ARGV[4..]   per key, in KEYS order: its rule count r; the rank of the oldest entry to read,
--             as a negative index (Go picks -(largest limit + 1), capped, so that one entry
--             beyond any full window is seen); then r pairs of limit and window in milliseconds.
--
-- Reply: a flat array of integers, {status, then per rule in ARGV order: used, reset, retry}.
--   status  0 denied: nothing recorded, the state before the request;
--           1 allowed: recorded, the state after recording;
--           2 replayed: already recorded by an earlier call, the current state;
--           3 reported: after "peek" or "undo", the current state.
--   used    entries inside the rule's window.
--   reset   microseconds until the oldest of them leaves the window (0 when none).
--   retry   microseconds until the rule admits one more request (0 when it would now).

local call, tonumber, fmt = redis.call, tonumber, string.format
local KEYS, ARGV = KEYS, ARGV
local mode, id, nowstr = ARGV[1], ARGV[2], ARGV[3]
if nowstr == '' then
  local t = call('TIME')
  nowstr = t[1] .. ('00000' .. t[2]):sub(-6)
end
local now = tonumber(nowstr)

-- The script runs on every request, so it does little: one read per key, whose newest
-- entries answer every rule (a window holds a suffix of the score order), few tables, and
-- strings rather than numbers handed to Redis, which formats numbers slowly.
-- Per key: the ARGV index of its rule count, its newest entries (id, score, id, score, ...),
-- whether older ones exist, and its longest window in µs and, as given, in ms for PEXPIRE.
-- num holds ARGV's rule counts, limits and windows (µs) as numbers, at the same indexes.
local at, z, more, span, ttl, num = {}, {}, {}, {}, {}, {}
local a = 4
for i = 1, #KEYS do
  local key, r, first = KEYS[i], tonumber(ARGV[a]), ARGV[a + 1]
  if mode == 'undo' then call('ZREM', key, id) end
  local raw = r > 0 and call('ZRANGE', key, first, '-1', 'WITHSCORES') or {}
  for j = 2, #raw, 2 do raw[j] = tonumber(raw[j]) end
  local maxwin = 0
  for j = a + 2, a + 1 + 2 * r, 2 do
    local win = tonumber(ARGV[j + 1]) * 1000
    if win > maxwin then maxwin, ttl[i] = win, ARGV[j + 1] end
    num[j], num[j + 1] = tonumber(ARGV[j]), win
  end
  num[a] = r
  at[i], z[i], more[i], span[i] = a, raw, #raw >= -2 * tonumber(first), maxwin
  a = a + 2 + 2 * r
end

-- count returns how many entries of key i lie inside a window of win microseconds.
local function count(i, win)
  local raw, lo, c = z[i], now - win, 0
  for j = #raw, 2, -2 do
    if raw[j] <= lo then return c end
    c = c + 1
  end
  if not more[i] then return c end
  return call('ZCOUNT', KEYS[i], fmt('%d', lo + 1), '+inf')
end

local status = 3
if mode == 'allow' then
  status = 1
  for i = 1, #KEYS do
    local raw = z[i]
    for j = #raw - 1, 1, -2 do
      if raw[j] == id then status = 2 end
    end
    if status == 1 and more[i] and call('ZSCORE', KEYS[i], id) then status = 2 end
  end
end

-- Count every rule; the request is admitted when none is full.
local reply, n = {status}, 1
for i = 1, #KEYS do
  a = at[i]
  for j = a + 2, a + 1 + 2 * num[a], 2 do
    local used = count(i, num[j + 1])
    if status == 1 and used >= num[j] then status = 0 end
    reply[n + 1], reply[n + 2], reply[n + 3] = used, 0, 0
    n = n + 3
  end
end

if mode == 'allow' then
  for i = 1, #KEYS do
    local key, raw, cut = KEYS[i], z[i], now - span[i]
    if more[i] or (raw[2] and raw[2] <= cut) then
      call('ZREMRANGEBYSCORE', key, '-inf', fmt('%d', cut))
    end
    if status == 1 then
      call('ZADD', key, nowstr, id)
      call('PEXPIRE', key, ttl[i])
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

-- Report every rule. The entries inside a window are the newest "used" ones; a recorded
-- request is one of them.
n = 1
for i = 1, #KEYS do
  a = at[i]
  local key, raw = KEYS[i], z[i]
  local m = #raw / 2
  for j = a + 2, a + 1 + 2 * num[a], 2 do
    local limit, win, used = num[j], num[j + 1], reply[n + 1]
    if status == 1 then used = used + 1 end
    if used > 0 then
      local oldest, retry = raw[2 * (m - used + 1)], 0
      if used > m then
        oldest = tonumber(call('ZRANGEBYSCORE', key, fmt('%d', now - win + 1), '+inf',
          'WITHSCORES', 'LIMIT', '0', '1')[2])
      end
      if used >= limit then
        -- One more fits once used - limit + 1 entries have left: the limit-th newest is the last.
        local last = raw[2 * (m - limit + 1)]
        if limit > m then
          last = tonumber(call('ZRANGE', key, fmt('%d', -limit), fmt('%d', -limit), 'WITHSCORES')[2])
        end
        retry = last + win - now
      end
      reply[n + 1], reply[n + 2], reply[n + 3] = used, oldest + win - now, retry
    end
    n = n + 3
  end
end
reply[1] = status
return reply
