-- sliding_log.lua: otpgate's limiter, a sliding-window log over one sorted set per key,
-- deciding a request against every rule of every key at once, together with the fraud
-- guard's counters and blocks of the same request.
--
-- Each key is a sorted set whose members are request ids and whose scores are the times of
-- the requests in microseconds. A request at score s counts for a rule of window w while
-- now - w < s; entries after now (left behind by a clock step back) count too, so that a
-- step back never admits more. Scores are whole microseconds, so "s > now - w" is written as
-- the inclusive bound now - w + 1. A key expires one longest window after the last request
-- it recorded.
--
-- A guard key is a hash of one fraud target (docs/fraud.md): exponentially decayed counts of
-- sends and approvals over a short horizon (ss, as) and a long one (sl, al) as of time t, the
-- horizons they decay by (hs, hl, in µs), a block's end (b, µs) and mode (m: e enforce, s
-- shadow), the last request id it recorded (i), when its expiry was last set (x) and when
-- it first counted a send (f), so that a young target's baseline is not read as a quiet
-- one's, and, while a block lasts, the solved sends it admitted that no approval has paid
-- back (bu): counted over the block's whole life, they do not decay. A network's hash also
-- counts the distinct countries it asked for (nc, decaying with the long horizon) and when
-- it last asked for each (k<country>, µs).
--
-- KEYS[1..n]  one per limit of the policy, in ARGV order: a sorted set or a guard hash.
-- ARGV[1]     mode: "allow" records the request in every key if every rule and guard admits
--             it, and in none otherwise; "peek" records nothing; "undo" removes the request
--             id from every sorted set first and takes it back from the guards (see ARGV[12]).
--             Only "allow" trims entries older than a key's longest window.
-- ARGV[2]     the request id. "allow" answers "replayed" without recording when a key already
--             holds it: a client retry of a call that reached Redis must not count twice.
-- ARGV[3]     now in microseconds, or "" for the server clock (TIME); only tests set it.
-- ARGV[4]     how many guard settings follow: 0, or 13 when KEYS hold guard hashes:
-- ARGV[5..12] the short and the long horizon in ms, the ratio, the prior rate, the prior
--             weight, the block in ms; for "undo", the request's time in µs and "always" or
--             "held" (take it back only when a sorted set of this call held the request);
-- ARGV[13..16] the surge allowance (how many times its baseline volume a target may carry
--             before its volume counts against it), the challenge level this request solved
--             (0 for none), how many solved sends a block admits over its life that no
--             approval paid back (0: a block admits nothing), and how many
--             distinct countries a network may ask for before it needs a challenge;
-- ARGV[17]    how many approvals over the long horizon make a country established rather
--             than young (the young-countries pool).
-- ARGV[...]   per key, in KEYS order, either a sorted set: its rule count r; the rank of the
--             oldest entry to read, as a negative index (Go picks -(largest limit + 1),
--             capped, so that one entry beyond any full window is seen); then r pairs of
--             limit and window in milliseconds, a negative limit marking a shadow rule, which
--             is counted and recorded but never refuses;
--             or a budget: "b"; "e" (enforce), "s" (shadow) or "a" (alert); its cap and this
--             request's cost in whole micro-units of the currency; its key's lifetime in ms
--             (past the window's end); for "undo", "a" to take the cost back always, "h"
--             only when a sorted set of this call held the request, "" never; its fence:
--             "" none, "e" enforce, "s" report only; the request's country; the headroom;
--             the young countries' floor (micro-units); the window's length in ms; for
--             "undo", instead of the fence's mode, "y" when the request was counted in the
--             young countries' floor, "c" when in its country's share alone, "" when in none;
--             or a guard: "g"; "e" (enforce) or "s" (shadow); its floor; its volume floor
--             (recent sends beyond the surge allowance that need a challenge; 0: none); the
--             factor of its baseline conversion below which volume counts (-1: whatever the
--             conversion); the request's country for a network's distinct countries ("": none);
--             its role: "" none, "c" a country whose youth (fewer approvals over the long
--             horizon than ARGV[17]) sends the request to the young-countries pool,
--             "y" that pool: a guard read only when a country of the call is young, whose
--             trips ask for a challenge instead of blocking.
--
-- A budget key is a hash of one budget's window: what the window spent (u, micro-units),
-- which of its thresholds (50, 80 and 100 %) were crossed (c, bits 1, 2 and 4), each once,
-- and the last request id it recorded (i); a fenced budget's also what each country spent
-- (s<country>), what the young countries spent together (y) and each of them in it
-- (q<country>, given back to y when the country has earned a share of its own), and which
-- countries reached their share (r<country>, once).
--
-- Reply: a flat array of integers, {status, now, then per key in KEYS order: for a sorted
-- set per rule used, reset, retry; for a budget state, spent, crossed, fence, share,
-- country spent, fence crossed; for a guard state,
-- retry, unapproved, signal, level, its counts ss, as, sl, al, nc times 100, after this
-- request, and the recent sends its baseline explains (the surge allowance) times 100}.
--   status  0 denied: nothing recorded, the state before the request;
--           1 allowed: recorded, the state after recording;
--           2 replayed: already recorded by an earlier call, the current state;
--           3 reported: after "peek" or "undo", the current state;
--           4 reported after "undo", which found the request in a sorted set.
--   now     the time of the decision in microseconds.
--   used    entries inside the rule's window.
--   reset   microseconds until the oldest of them leaves the window (0 when none).
--   retry   microseconds until the rule admits one more request (0 when it would now); for a
--           guard, until its block ends.
--   state   of a guard: 0 clear; 1 blocked, refusing; 2 tripped by this request, refusing;
--           3 blocked in shadow mode (would refuse); 4 tripped in shadow mode; 5 needs a
--           challenge of the level given, refusing; 6 would need one (shadow); 7 blocked,
--           admitted by a solved challenge; 8 needed a challenge, admitted by a solved one;
--           9 the young-countries pool tripped by this request: from now on until its block
--           ends (retry) every send to a young country needs a challenge, this one too
--           unless it solved one; 10 the same in shadow mode.
--   state   of a budget: 0 within; 1 over its cap, refusing; 2 over, in shadow mode (would
--           refuse); 3 over, in alert mode (admitted).
--   spent   of a budget, what its window spent after this request (before it, when refused).
--   crossed of a budget, the thresholds this request crossed first in the window (bits).
--   fence   of a budget: 0 not fenced (no fence, or no country guard in the call); 1 within
--           the country's share; 2 past it, refusing; 3 past it, reported only; plus 4 when
--           the request was held to the young countries' floor.
--   share   what the request's country may spend in the window (micro-units): the young
--           countries' floor when it is young, which they share.
--   country spent  what the country (young: the young countries) spent in the window, after
--           this request when admitted.
--   fence crossed  1 when this request first found its country past its share this window.
--   unapproved  the guard's recent unapproved sends before this request, rounded.
--   signal  what decided the state: 0 nothing; 1 recent unapproved sends against the
--           target's baseline; 2 unapproved sends over the long horizon; 3 volume against
--           the baseline; 4 distinct countries of a network; 5 the young-countries pool.
--   level   the challenge level that would admit the request (0: none would).
--   expect  the recent sends the target's baseline explains, times the surge allowance,
--           times 100: what its volume was weighed against (0 when it was not weighed).

local call, tonumber, fmt, exp = redis.call, tonumber, string.format, math.exp
local KEYS, ARGV = KEYS, ARGV
local mode, id, nowstr = ARGV[1], ARGV[2], ARGV[3]
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

-- The time constant, in µs, of a guard's count of sends still in flight (field p): a
-- person's code arrives and is typed within seconds, whatever the horizons.
local pending = 3000000

-- The guard's settings, in µs where they are times.
local ng = tonumber(ARGV[4])
local gshort, glong, gratio, gprior, gweight, gblock, gttl, gsurge, gsolved, gpass, gcountries, gyoung
if ng > 0 then
  gshort, glong = tonumber(ARGV[5]) * 1000, tonumber(ARGV[6]) * 1000
  gratio, gweight = tonumber(ARGV[7]), tonumber(ARGV[9])
  gprior, gblock = tonumber(ARGV[8]) * gweight, tonumber(ARGV[10]) * 1000
  gsurge, gsolved = tonumber(ARGV[13]) or 0, tonumber(ARGV[14]) or 0
  gpass, gcountries = tonumber(ARGV[15]) or 0, tonumber(ARGV[16]) or 0
  gyoung = tonumber(ARGV[17]) or 0
  -- A hash lives two long horizons (its counts are then below 14%), or as long as a block.
  gttl = fmt('%d', math.max(2 * tonumber(ARGV[6]), tonumber(ARGV[10])))
end

-- The script runs on every request, so it does little: one read per key, whose newest
-- entries answer every rule (a window holds a suffix of the score order), few tables, and
-- strings rather than numbers handed to Redis, which formats numbers slowly.
-- Per sorted set: the ARGV index of its rule count, its newest entries (id, score, id,
-- score, ...), whether older ones exist, and its longest window in µs and, as given, in ms
-- for PEXPIRE. num holds ARGV's rule counts, limits and windows (µs) as numbers, at the same
-- indexes; shadow marks the shadow rules' limits. guard holds each guard key's counts,
-- decayed to now.
-- readguard reads a guard's hash into g, its counts decayed to now.
local function readguard(key, g)
  local cc = g.cc
  local h = call('HMGET', key, 'ss', 'as', 'sl', 'al', 't', 'hs', 'hl', 'b', 'm', 'i', 'x', 'nc', 'f', cc and 'k' .. cc or 'f', 'p', 'bu')
  g.ss, g.as, g.sl, g.al, g.nc, g.p, g.newc, g.read = 0, 0, 0, 0, 0, 0, cc ~= nil, true
  g.bu = tonumber(h[16]) or 0
  g.b, g.m, g.id, g.x, g.t, g.f = tonumber(h[8]) or 0, h[9], h[10], tonumber(h[11]), tonumber(h[5]), tonumber(h[13])
  if g.t then
    local dt = now - g.t
    if dt < 0 then dt = 0 end
    g.hs, g.hl = tonumber(h[6]), tonumber(h[7])
    local fs, fl = exp(-dt / g.hs), exp(-dt / g.hl)
    g.ss, g.as, g.sl, g.al = tonumber(h[1]) * fs, tonumber(h[2]) * fs, tonumber(h[3]) * fl, tonumber(h[4]) * fl
    g.nc = (tonumber(h[12]) or 0) * fl
    g.p = (tonumber(h[15]) or 0) * exp(-dt / pending)
    -- A country the network asked for within a long horizon is not new.
    if cc and h[14] and now - tonumber(h[14]) < g.hl then g.newc = false end
  end
end

local at, z, more, span, ttl, num, shadow, guard, budget = {}, {}, {}, {}, {}, {}, {}, {}, {}
local held = false
local a = 5 + ng
for i = 1, #KEYS do
  local key, r = KEYS[i], ARGV[a]
  at[i] = a
  if r == 'b' then
    local fence, cc = ARGV[a + 6], ARGV[a + 7]
    local h = call('HMGET', key, 'u', 'c', 'i', 's' .. cc, 'y', 'r' .. cc, 'q' .. cc)
    budget[i] = {mode = ARGV[a + 1], cap = tonumber(ARGV[a + 2]), cost = tonumber(ARGV[a + 3]), ttl = ARGV[a + 4],
      undo = ARGV[a + 5], used = tonumber(h[1]) or 0, crossed = tonumber(h[2]) or 0, id = h[3], fresh = h[1] == false,
      state = 0, new = 0, fence = fence, cc = cc, headroom = tonumber(ARGV[a + 8]) or 0,
      floor = tonumber(ARGV[a + 9]) or 0, win = (tonumber(ARGV[a + 10]) or 0) * 1000,
      cspent = tonumber(h[4]) or 0, yspent = tonumber(h[5]) or 0, reached = h[6] ~= false, qspent = tonumber(h[7]) or 0,
      fstate = 0, share = 0, fnew = 0}
    a = a + 11
  elseif r == 'g' then
    local cc, role = ARGV[a + 5], ARGV[a + 6]
    if cc == '' then cc = nil end
    local g = {shadow = ARGV[a + 1] == 's', floor = tonumber(ARGV[a + 2]), vfloor = tonumber(ARGV[a + 3]),
      vratio = tonumber(ARGV[a + 4]), cc = cc, role = role, b = 0}
    -- The pool is read only when a young country asks for it, in the guards' loop below.
    if role ~= 'y' or mode ~= 'allow' then readguard(key, g) end
    guard[i] = g
    a = a + 7
  else
    r = tonumber(r)
    local first = ARGV[a + 1]
    if mode == 'undo' and call('ZREM', key, id) == 1 then held = true end
    local raw = r > 0 and call('ZRANGE', key, first, '-1', 'WITHSCORES') or {}
    for j = 2, #raw, 2 do raw[j] = tonumber(raw[j]) end
    local maxwin = 0
    for j = a + 2, a + 1 + 2 * r, 2 do
      local win, lim = tonumber(ARGV[j + 1]) * 1000, tonumber(ARGV[j])
      if win > maxwin then maxwin, ttl[i] = win, ARGV[j + 1] end
      if lim < 0 then lim, shadow[j] = -lim, true end
      num[j], num[j + 1] = lim, win
    end
    num[a] = r
    z[i], more[i], span[i] = raw, #raw >= -2 * tonumber(first), maxwin
    a = a + 2 + 2 * r
  end
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
    local raw, g, b = z[i], guard[i], budget[i]
    if g then
      if g.id == id then status = 2 end
    elseif b then
      if b.id == id then status = 2 end
    else
      for j = #raw - 1, 1, -2 do
        if raw[j] == id then status = 2 end
      end
      if status == 1 and more[i] and call('ZSCORE', KEYS[i], id) then status = 2 end
    end
  end
end

-- Count every rule; the request is admitted when none but shadow rules is full.
local reply, n = {status, now}, 2
for i = 1, #KEYS do
  if guard[i] then
    for j = n + 1, n + 11 do reply[j] = 0 end
    n = n + 11
  elseif budget[i] then
    for j = n + 1, n + 7 do reply[j] = 0 end
    n = n + 7
  else
    a = at[i]
    for j = a + 2, a + 1 + 2 * num[a], 2 do
      local used = count(i, num[j + 1])
      if status == 1 and used >= num[j] and not shadow[j] then status = 0 end
      reply[n + 1], reply[n + 2], reply[n + 3] = used, 0, 0
      n = n + 3
    end
  end
end

-- The budgets. A request that would take a window past its cap is refused by an enforcing
-- budget and reported by the others. The first refusal crosses the 100 % threshold: the
-- budget is spent, which is a fact about it, as a trip is about a guard.
--
-- A fenced budget shares its cap out by country, from the approvals the country's guard
-- (role "c", in this call) counted over the long horizon: its share is the headroom times
-- what those approvals, as a rate over the time they decayed over, come to in a window at
-- this request's cost, capped by the cap. A country whose share is below the young
-- countries' floor is young: the young countries together may spend that floor, and what
-- a country spent while young leaves it when the country earns a share of its own, so
-- that a launch's first sends do not keep the floor from the next young country. A country
-- past its share is refused by an enforcing fence, reported by the others; what the others
-- spent stays theirs.
local cguard
for i = 1, #KEYS do
  local g = guard[i]
  if g and g.role == 'c' and g.read then cguard = g end
end
for i = 1, #KEYS do
  local b = budget[i]
  if b and mode == 'allow' and status ~= 2 and b.used + b.cost > b.cap then
    if b.mode == 'e' then
      b.state = 1
      if status == 1 then status = 0 end
    elseif b.mode == 's' then
      b.state = 2
    else
      b.state = 3
    end
  end
  if b and mode == 'allow' and b.fence ~= '' and cguard then
    local age = cguard.f and now - cguard.f or 0
    local span = glong * (1 - exp(-age / glong))
    local share = 0
    if span > 0 then share = b.headroom * cguard.al * b.win / span * b.cost end
    if share > b.cap then share = b.cap end
    b.fstate, b.share = 1, math.floor(share)
    local spent = b.cspent
    if share < b.floor then
      b.fstate, b.share, spent = 5, b.floor, b.yspent
    elseif b.qspent > 0 then
      b.yspent, b.qspent, b.released = math.max(b.yspent - b.qspent, 0), 0, true
    end
    b.seen = spent
    if status ~= 2 and spent + b.cost > b.share then
      b.fstate = b.fstate + 1
      if b.fence ~= 'e' then
        b.fstate = b.fstate + 1
      elseif status == 1 then
        status = 0
      end
      if not b.reached then b.fnew = 1 end
    end
  end
end

-- The guards. A block refuses, or in shadow mode would; a shadow block is no block for an
-- enforcing guard, which decides afresh. An unblocked key trips (signal 1) when its recent
-- unapproved sends, this one included, reach the floor while its recent conversion is below
-- ratio times its baseline: the conversion of what came before the recent horizon, with the
-- prior standing in for history it does not have; or (signal 2) when its unapproved sends
-- over the long horizon reach the floor while its long conversion is below ratio times its
-- long conversion with the prior, so that sends paced under the recent floor add up. A trip
-- blocks the key even when another rule refuses the request: it is a fact about the key, not
-- a record of the request. Short of a trip, a key needs a challenge when its recent volume
-- runs past its surge allowance over what its baseline explains (signal 3, level 2), or when
-- a network asks for more distinct countries than allowed without converting (signal 4).
-- A blocked key admits a solved challenge while the solved sends it admitted during the
-- block, less the approvals they earned, stay under gpass: counted over the block's whole
-- life, not a decaying horizon, so that a solver gets at most gpass sends per block whatever
-- it pays in work. The level asked is 3 plus those sends, so the work quadruples with each
-- (the challenger's levels), up to level 6: the block's legitimate users, who enter their codes, keep
-- meeting level 3; the attacker's solved sends add up to a block that admits none.
-- The young-countries pool counts the sends to countries without approved history together:
-- an attack spread over many new countries (each under its own floors) fills it. It trips
-- as a guard does (recent unapproved sends against its baseline, or long ones against the
-- prior) and then stays hot for a block's length: every send to a young country needs a
-- challenge meanwhile (signal 5); nothing is blocked. Legitimate traffic to established
-- countries never touches it.
local trip, young = {}, false
n = 2
-- settled returns a count of sends, this one included, less those of the last seconds, which
-- have had no time to be approved: the challenges judge conversion over the rest, so that a
-- surge's codes still being typed (which a horizon compressed to seconds would make most of
-- it) do not read as sends nobody entered. Volume is counted whole.
local function settled(count, g)
  local s = count + 1 - g.p
  if s < 1 then s = 1 end
  return s
end
for i = 1, #KEYS do
  local g = guard[i]
  if g and g.role == 'y' and mode == 'allow' then
    if young then
      readguard(KEYS[i], g)
      g.active = true
    else
      g.ss, g.as, g.sl, g.al, g.nc = 0, 0, 0, 0, 0
    end
  end
  if g and g.role == 'y' and not g.read then
    n = n + 11
  elseif g and g.role == 'y' then
    local state, retry, signal, level = 0, 0, 0, 0
    if mode == 'allow' and status ~= 2 then
      if g.b > now and (g.shadow or g.m == 'e') then
        -- Hot: since the pool tripped, every send to a young country needs a challenge.
        signal, level, retry = 5, 1, g.b - now
        if g.shadow then
          state = 6
        elseif gsolved >= level then
          state = 8
        else
          state = 5
          if status == 1 then status = 0 end
        end
      else
        -- Sends of the last seconds have had no time to be approved: they are left out, so
        -- that a new country's first users do not look like an attack.
        local s1, l1 = g.ss + 1 - g.p, g.sl + 1 - g.p
        if s1 < 1 then s1 = 1 end
        if l1 < 1 then l1 = 1 end
        local bs, ba = g.sl - g.ss, g.al - g.as
        if bs < 0 then bs = 0 end
        if ba < 0 then ba = 0 end
        if (s1 - g.as + 0.01 >= g.floor and g.as / s1 < gratio * (ba + gprior) / (bs + gweight)) or
          (l1 - g.al + 0.01 >= g.floor and g.al / l1 < gratio * (g.al + gprior) / (g.sl + gweight)) then
          trip[i], g.b, retry = true, now + gblock, gblock
          signal, level, state = 5, 1, 9
          if g.shadow then
            state = 10
          elseif gsolved < level and status == 1 then
            status = 0
          end
        end
      end
    end
    local u = math.floor(g.ss - g.as + 0.5)
    if u < 0 then u = 0 end
    reply[n + 1], reply[n + 2], reply[n + 3], reply[n + 4], reply[n + 5] = state, retry, u, signal, level
    n = n + 11
  elseif g then
    if g.role == 'c' and g.al < gyoung then young = true end
    local state, retry, signal, level = 0, 0, 0, 0
    local blocked = g.b > now
    local s1 = g.ss + 1
    local bs, ba = g.sl - g.ss, g.al - g.as
    if bs < 0 then bs = 0 end
    if ba < 0 then ba = 0 end
    local cb = (ba + gprior) / (bs + gweight)
    local passable = not g.shadow and gpass > 0 and g.bu + 1 < gpass + 0.01
    -- Levels rise to 6 (otp.ChallengeTop), 64 times the work of level 3.
    local passlevel = 3 + math.min(math.floor(g.bu + 0.01), 3)
    if blocked and (g.shadow or g.m == 'e') then
      state, retry = 1, g.b - now
      -- A replay was admitted before the block began: it reports the block, refusing nothing.
      if g.shadow then
        state = 3
      elseif status == 2 then
        state, retry = 0, 0
      else
        if passable then
          level = passlevel
          if gsolved >= level then state, g.pass = 7, true end
        end
        if state == 1 and status == 1 then status = 0 end
      end
    elseif mode == 'allow' and status ~= 2 then
      -- A hundredth of a send of slack: sends made at once have decayed by a hair meanwhile.
      if s1 - g.as + 0.01 >= g.floor and g.as / s1 < gratio * cb then
        signal = 1
      else
        local l1 = g.sl + 1
        if l1 - g.al + 0.01 >= g.floor and g.al / l1 < gratio * (g.al + gprior) / (g.sl + gweight) then signal = 2 end
      end
      if signal > 0 then
        trip[i], g.b, retry = true, now + gblock, gblock
        state = 2
        if g.shadow then
          state = 4
        else
          -- A new block: none of its solved sends yet.
          g.bu = 0
          if gpass > 0 then level = 3 end
          if status == 1 then status = 0 end
        end
      else
        if g.vfloor > 0 then
          -- The baseline's rate: its sends over the time they decayed over, which for a
          -- target younger than the long horizon is its age (so a young target is not read
          -- as a quiet one), less the recent horizon; unknown for a target younger than two
          -- recent horizons, which then has none.
          local age = g.f and now - g.f or 0
          local span = glong * (1 - exp(-age / glong)) - gshort * (1 - exp(-age / gshort))
          local expect = 0
          if span > gshort then expect = gsurge * bs * gshort / span end
          reply[n + 11] = math.floor(expect * 100 + 0.5)
          if s1 - expect + 0.01 >= g.vfloor and (g.vratio < 0 or g.as / settled(g.ss, g) < g.vratio * cb) then signal, level = 3, 2 end
        end
        if g.cc and gcountries > 0 and signal == 0 then
          local nc = g.nc + (g.newc and 1 or 0)
          if nc + 0.01 >= gcountries + 1 and g.al / settled(g.sl, g) < gratio * (g.al + gprior) / (g.sl + gweight) then
            signal, level = 4, 1
            if nc + 0.01 >= 2 * gcountries + 1 then level = 2 end
          end
        end
        if level > 0 then
          if g.shadow then
            state = 6
          elseif gsolved >= level then
            state = 8
          else
            state = 5
            if status == 1 then status = 0 end
          end
        end
      end
    elseif blocked then
      state, retry = 3, g.b - now
    end
    local u = math.floor(g.ss - g.as + 0.5)
    if u < 0 then u = 0 end
    reply[n + 1], reply[n + 2], reply[n + 3], reply[n + 4], reply[n + 5] = state, retry, u, signal, level
    n = n + 11
  elseif budget[i] then
    n = n + 7
  else
    n = n + 3 * num[at[i]]
  end
end

-- sethash writes a guard hash's fields from a flat list; it renews the hash's expiry when it
-- is new, when a short horizon has passed since it last did, or when a block begins.
local function sethash(key, g, fields, renew)
  if renew or not g.x or now - g.x >= gshort then
    fields[#fields + 1], fields[#fields + 2] = 'x', nowstr
    call('HSET', key, unpack(fields))
    call('PEXPIRE', key, gttl)
  else
    call('HSET', key, unpack(fields))
  end
end

-- crossings returns the thresholds (bits 1, 2, 4 for 50, 80, 100 %) that spending
-- reaches in a budget of cap which had not crossed those of mask yet.
local function crossings(spent, cap, mask)
  local out = 0
  for bit, pct in pairs({[1] = 50, [2] = 80, [4] = 100}) do
    if math.floor(mask / bit) % 2 == 0 and spent * 100 >= cap * pct then out = out + bit end
  end
  return out
end

if mode == 'allow' then
  local shorts, longs = ng > 0 and fmt('%d', gshort), ng > 0 and fmt('%d', glong)
  for i = 1, #KEYS do
    local key, g, b = KEYS[i], guard[i], budget[i]
    if b then
      local new = 0
      if status == 1 then
        b.used = b.used + b.cost
        new = crossings(b.used, b.cap, b.crossed)
      elseif b.state == 1 and math.floor(b.crossed / 4) % 2 == 0 then
        new = 4
      end
      local fields = {}
      if status == 1 or new > 0 then
        b.crossed, b.new = b.crossed + new, new
        fields = {'u', fmt('%d', b.used), 'c', fmt('%d', b.crossed), 'i', status == 1 and id or (b.id or '')}
      end
      if b.fstate > 0 and status == 1 then
        b.cspent, b.seen = b.cspent + b.cost, b.seen + b.cost
        fields[#fields + 1], fields[#fields + 2] = 's' .. b.cc, fmt('%d', b.cspent)
        if b.fstate >= 4 then
          b.yspent, b.qspent = b.yspent + b.cost, b.qspent + b.cost
          fields[#fields + 1], fields[#fields + 2] = 'q' .. b.cc, fmt('%d', b.qspent)
        end
      end
      if b.released or b.fstate >= 4 and status == 1 then
        fields[#fields + 1], fields[#fields + 2] = 'y', fmt('%d', b.yspent)
        if b.released then fields[#fields + 1], fields[#fields + 2] = 'q' .. b.cc, '0' end
      end
      if b.fnew > 0 then fields[#fields + 1], fields[#fields + 2] = 'r' .. b.cc, '1' end
      if #fields > 0 then
        call('HSET', key, unpack(fields))
        if b.fresh then call('PEXPIRE', key, b.ttl) end
      end
    elseif g and g.role == 'y' and not g.active then
      -- An idle pool: no young country asked for it.
    elseif g then
      local fields
      if status == 1 then
        g.ss, g.sl = g.ss + 1, g.sl + 1
        fields = {'ss', decimal(g.ss), 'as', decimal(g.as), 'sl', decimal(g.sl),
          'al', decimal(g.al), 't', nowstr, 'i', id}
        -- The horizons the counts decay by are written when they change (or are new) only.
        if g.hs ~= gshort or g.hl ~= glong then
          fields[#fields + 1], fields[#fields + 2], fields[#fields + 3], fields[#fields + 4] = 'hs', shorts, 'hl', longs
        end
        if not g.f then fields[#fields + 1], fields[#fields + 2] = 'f', nowstr end
        if g.pass then fields[#fields + 1], fields[#fields + 2] = 'bu', decimal(g.bu + 1) end
        fields[#fields + 1], fields[#fields + 2] = 'p', decimal(g.p + 1)
        if g.cc then
          if g.newc then g.nc = g.nc + 1 end
          fields[#fields + 1], fields[#fields + 2] = 'nc', decimal(g.nc)
          fields[#fields + 1], fields[#fields + 2] = 'k' .. g.cc, nowstr
        end
      elseif trip[i] then
        fields = {}
      end
      if trip[i] then
        local k = #fields
        fields[k + 1], fields[k + 2], fields[k + 3], fields[k + 4] = 'b', fmt('%d', g.b), 'm', g.shadow and 's' or 'e'
        fields[k + 5], fields[k + 6] = 'bu', '0'
      end
      if fields then sethash(key, g, fields, trip[i]) end
    else
      local raw, cut = z[i], now - span[i]
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
end

-- Undo takes the request back from the guards' send counts, as much of it as has not
-- decayed since it was recorded; the approvals and the block stay.
if mode == 'undo' and ng > 0 and (ARGV[12] == 'always' or (ARGV[12] == 'held' and held)) then
  local rec = tonumber(ARGV[11])
  for i = 1, #KEYS do
    local g = guard[i]
    if g and g.t then
      local w = now - rec
      if w < 0 then w = 0 end
      local ss, sl = g.ss - exp(-w / g.hs), g.sl - exp(-w / g.hl)
      if ss < 0 then ss = 0 end
      if sl < 0 then sl = 0 end
      g.ss, g.sl = ss, sl
      -- The distinct countries stay: a country asked for was asked for.
      call('HSET', KEYS[i], 'ss', decimal(ss), 'as', decimal(g.as), 'sl', decimal(sl),
        'al', decimal(g.al), 'nc', decimal(g.nc), 't', nowstr)
    end
  end
end

-- Undo takes a budget's cost back when its request was recorded: always, or when a sorted set
-- of this call held it. What a threshold crossed stays crossed.
if mode == 'undo' then
  for i = 1, #KEYS do
    local b = budget[i]
    if b and not b.fresh and (b.undo == 'a' or (b.undo == 'h' and held)) then
      b.used = b.used - b.cost
      if b.used < 0 then b.used = 0 end
      local fields = {'u', fmt('%d', b.used)}
      if b.fence ~= '' then
        fields[3], fields[4] = 's' .. b.cc, fmt('%d', math.max(b.cspent - b.cost, 0))
        if b.fence == 'y' then
          fields[5], fields[6] = 'y', fmt('%d', math.max(b.yspent - b.cost, 0))
          fields[7], fields[8] = 'q' .. b.cc, fmt('%d', math.max(b.qspent - b.cost, 0))
        end
      end
      call('HSET', KEYS[i], unpack(fields))
    end
  end
end

-- Report every rule. The entries inside a window are the newest "used" ones; a recorded
-- request is one of them. A guard reports its counts as they now stand.
n = 2
for i = 1, #KEYS do
  a = at[i]
  local g, b = guard[i], budget[i]
  if g then
    reply[n + 6], reply[n + 7], reply[n + 8] = math.floor(g.ss * 100 + 0.5), math.floor(g.as * 100 + 0.5), math.floor(g.sl * 100 + 0.5)
    reply[n + 9], reply[n + 10] = math.floor(g.al * 100 + 0.5), math.floor(g.nc * 100 + 0.5)
    n = n + 11
  elseif b then
    reply[n + 1], reply[n + 2], reply[n + 3] = b.state, b.used, b.new
    reply[n + 4], reply[n + 5], reply[n + 6], reply[n + 7] = b.fstate, b.share, b.seen or 0, b.fnew
    n = n + 7
  else
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
end
if mode == 'undo' and held then status = 4 end
reply[1] = status
return reply
