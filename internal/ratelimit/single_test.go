package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/testenv"
	"otpgate/lua"
)

// singleScript is a variant of lua/sliding_log.lua, kept here to measure it: a key whose only
// rule is 1/window needs no sorted set, since a plain key holding the request id with a TTL
// of the window answers it exactly (its PTTL is the retry-after). The variant decides those
// keys so and hands the other keys to the real script, run as a function, so that only the
// special case differs. It answers as the real script does, for "allow" and "peek"; "undo"
// deletes a plain key that holds the request id. It is not adopted: see BenchmarkSendPolicy.
var singleScript = `local call = redis.call
local function zsets(KEYS, ARGV)
` + lua.SlidingLog + `
end
local mode, id = ARGV[1], ARGV[2]
local zk, za, singles, layout = {}, {mode, id, ARGV[3]}, {}, {}
local a = 4
for i = 1, #KEYS do
  local r = tonumber(ARGV[a])
  -- A refund names keys without rules: a plain key is told by its type.
  local plain = r == 1 and ARGV[a + 2] == '1'
  if mode == 'undo' then plain = call('TYPE', KEYS[i]).ok == 'string' end
  if plain then
    singles[#singles + 1] = {key = KEYS[i], win = ARGV[a + 3]}
    layout[i] = {single = #singles, rules = r}
  else
    zk[#zk + 1] = KEYS[i]
    for j = a, a + 1 + 2 * r do za[#za + 1] = ARGV[j] end
    layout[i] = {rules = r}
  end
  a = a + 2 + 2 * r
end
-- The plain keys first: held by another request means refused.
local status, replayed = 1, false
for _, s in ipairs(singles) do
  if mode == 'undo' then
    if call('GET', s.key) == id then call('DEL', s.key) end
    s.ttl = 0
  else
    s.ttl = call('PTTL', s.key)
    if s.ttl > 0 and mode == 'allow' then
      if call('GET', s.key) == id then replayed = true else status = 0 end
    end
  end
end
local zmode = mode
if mode == 'allow' and status == 0 then zmode = 'peek' end
za[1] = zmode
local zr = {1}
if #zk > 0 then zr = zsets(zk, za) end
if mode ~= 'allow' then
  status = 3
elseif status == 1 then
  if zr[1] == 0 then status = 0 elseif zr[1] == 2 or replayed then status = 2 end
end
if status == 1 then
  for _, s in ipairs(singles) do
    call('SET', s.key, id, 'PX', s.win)
    s.ttl = tonumber(s.win)
  end
end
local reply, zi = {status}, 2
for i = 1, #KEYS do
  local l = layout[i]
  if l.single and l.rules > 0 then
    local ttl = math.max(singles[l.single].ttl, 0) * 1000
    local used = 0
    if ttl > 0 then used = 1 end
    reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = used, ttl, ttl
  elseif not l.single then
    for _ = 1, 3 * l.rules do
      reply[#reply + 1] = zr[zi]
      zi = zi + 1
    end
  end
end
return reply`

// singleLimiter is a limiter running singleScript.
func singleLimiter(rdb redis.UniversalClient, prefix string) *Limiter {
	l := New(rdb, prefix)
	l.script = redis.NewScript(singleScript)
	return l
}

// TestSingleScriptDecidesAsTheRealOne drives the send policy through both scripts on real
// Redis (the plain keys' TTLs are Redis's own clock): same decisions, same counts, the same
// retry-after to the millisecond, so the benchmark compares like with like.
func TestSingleScriptDecidesAsTheRealOne(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	real, single := New(rdb, prefix+"real:"), singleLimiter(rdb, prefix+"single:")
	ctx := context.Background()
	perKey := []otp.Rule{{Limit: 1, Window: time.Minute}, {Limit: 10, Window: time.Hour}}
	policy := func(phone, ip string) []otp.Limit {
		return []otp.Limit{
			{Scope: "duplicate", Key: phone + "|" + ip, Rules: []otp.Rule{{Limit: 1, Window: 5 * time.Second}}},
			{Scope: "phone", Key: phone, Rules: perKey},
			{Scope: "ip", Key: ip, Rules: perKey},
		}
	}
	steps := []struct {
		name, phone, ip string
		allowed         bool
	}{
		{"First", "+819012345678", "192.0.2.1", true},
		{"DoubleSubmit", "+819012345678", "192.0.2.1", false},
		{"SamePhoneOtherClient", "+819012345678", "192.0.2.2", false},
		{"OtherPhoneSameClient", "+819087654321", "192.0.2.1", false},
		{"Others", "+819087654321", "192.0.2.3", true},
	}
	for _, s := range steps {
		a, err := real.Allow(ctx, policy(s.phone, s.ip))
		if err != nil {
			t.Fatalf("%s: real: %v", s.name, err)
		}
		b, err := single.Allow(ctx, policy(s.phone, s.ip))
		if err != nil {
			t.Fatalf("%s: single: %v", s.name, err)
		}
		if a.Allowed != s.allowed || b.Allowed != s.allowed {
			t.Fatalf("%s: got allowed %v (real) and %v (single), want %v", s.name, a.Allowed, b.Allowed, s.allowed)
		}
		for i := range a.Rules {
			x, y := a.Rules[i], b.Rules[i]
			if x.Used != y.Used || x.Violated != y.Violated || (x.RetryAfter-y.RetryAfter).Abs() > 50*time.Millisecond {
				t.Errorf("%s: rule %s %s: got used %d violated %v retry %v (single), want %d %v %v (real)",
					s.name, x.Scope, x.Rule, y.Used, y.Violated, y.RetryAfter, x.Used, x.Violated, x.RetryAfter)
			}
		}
	}

	t.Run("RefundFreesThePlainKey", func(t *testing.T) {
		p := policy("+819011112222", "192.0.2.9")
		d, err := single.Allow(ctx, p)
		if err != nil || !d.Allowed {
			t.Fatalf("got %v, %v; want allowed", d.Allowed, err)
		}
		if err := single.Refund(ctx, d.Reservation); err != nil {
			t.Fatalf("Refund: %v", err)
		}
		if d, err := single.Allow(ctx, p); err != nil || !d.Allowed {
			t.Errorf("after the refund: got %v, %v; want allowed", d.Allowed, err)
		}
	})
}
