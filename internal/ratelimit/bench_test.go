package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// The benchmarks model the send endpoint of a busy server: 64 callers at once, phones and
// client addresses drawn from a million each, and the default send policy.
const (
	benchCallers  = 64
	benchKeyspace = 1_000_000
)

// benchKeys index the numbers as the server does: Redis holds the keyed index of a number,
// never the number (docs/privacy.md).
func benchKeys() *pii.Keys {
	k, err := pii.New([]byte("benchmark secret of at least thirty-two bytes"), "")
	if err != nil {
		panic(err)
	}
	return k
}

// draw returns a phone and a client address drawn from the keyspace.
func draw(r *rand.Rand) (phone, ip string) {
	// The number's first four digits after +8190 vary fastest, so that the numbers spread
	// over 10,000 prefixes (the guard's prefix is the number less its last four digits), a
	// hundred numbers each.
	m := r.IntN(benchKeyspace)
	phone = "+8190" + strconv.Itoa(100_000_000 + m%10_000*10_000 + m/10_000)[1:]
	n := r.IntN(benchKeyspace)
	return phone, "10." + strconv.Itoa(n>>16) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255)
}

// policyOf is the default send policy of phone and ip, keyed as the otp service keys it:
// phone 1/1m,10/1h on the number's index, IP 1/1m,10/1h, and one send per phone and client
// per 5s on a hash of the index and the client. The index is computed per decision, as
// the service does.
func policyOf(keys *pii.Keys, phone, ip string) []rate.Limit {
	index := keys.Index(phone)
	dup := sha256.Sum256([]byte(index + "\x00" + ip))
	perKey := []rate.Rule{{Limit: 1, Window: time.Minute}, {Limit: 10, Window: time.Hour}}
	return []rate.Limit{
		{Scope: "phone", Key: index, Rules: perKey},
		{Scope: "ip", Key: ip, Rules: perKey},
		{Scope: "dup", Key: hex.EncodeToString(dup[:12]), Rules: []rate.Rule{{Limit: 1, Window: 5 * time.Second}}},
	}
}

// sendPolicy returns the default send policy (policyOf) for a phone and a client address
// drawn from the keyspace.
func sendPolicy(r *rand.Rand) []rate.Limit {
	phone, ip := draw(r)
	return policyOf(benchIndex, phone, ip)
}

// benchIndex is the benchmarks' index key; read only.
var benchIndex = benchKeys()

// guardedPolicy is sendPolicy with the fraud guard on as the server's defaults run it: the
// number's country and prefix and the client's network, each with its guard hash.
func guardedPolicy(r *rand.Rand) []rate.Limit {
	phone, ip := draw(r)
	limits := policyOf(benchIndex, phone, ip)
	params := rate.GuardParams{ShortHorizon: 10 * time.Minute, LongHorizon: 7 * 24 * time.Hour,
		Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20, Block: 12 * time.Hour}
	return append(limits,
		rate.Limit{Scope: rate.ScopeCountry, Key: "JP", Guard: &rate.Guard{Floor: 1_000_000, Params: params}},
		rate.Limit{Scope: rate.ScopePrefix, Key: phone[:len(phone)-4], Guard: &rate.Guard{Floor: 10, Params: params}},
		rate.Limit{Scope: rate.ScopeIPNet, Key: ip[:strings.LastIndexByte(ip, '.')] + ".0/24", Guard: &rate.Guard{Floor: 10, Params: params}},
	)
}

// budgetedPolicy is sendPolicy with two budgets, as a spend configuration with a global daily
// budget and a monthly one for the number's country makes them: every send reserves its
// cost in both windows, whose caps it never reaches, so every decision writes them.
func budgetedPolicy(r *rand.Rand) []rate.Limit {
	budget := func(key string, ttl time.Duration) rate.Limit {
		return rate.Limit{Scope: otp.ScopeBudget, Key: key, Budget: &rate.Budget{
			Mode: rate.BudgetEnforce, Cap: 1_000_000_000_000, Cost: 50_000, TTL: ttl}}
	}
	return append(sendPolicy(r), budget("global:day:20300304", 25*time.Hour), budget("jp:month:20300301", 32*24*time.Hour))
}

// benchClient returns a client as the server configures it, to a private Redis that nothing
// else uses while the benchmark runs, with room for every caller in its pool.
func benchClient(b *testing.B) *redis.Client {
	b.Helper()
	srv := testenv.StartRedis(b)
	rdb := redis.NewClient(&redis.Options{
		Addr:                  srv.Addr,
		ContextTimeoutEnabled: true,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		PoolSize:              benchCallers,
	})
	b.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// variant is one way of deciding the send policy.
type variant struct {
	name   string
	decide func(ctx context.Context, r *rand.Rand) error
}

// refusals counts the decisions that refused, for the variants that run the real script:
// the comparison is of admitted decisions, which write every key, so it must stay near 0.
type refusals map[string]*atomic.Int64

// count returns a decision's error, counting a refusal under name.
func (rs refusals) count(name string, dec rate.Decision, err error) error {
	if err == nil && !dec.Allowed {
		rs[name].Add(1)
	}
	return err
}

// floorScript does only what any sliding log over sorted sets must do for this policy, and
// answers as the real script would: read the clock, read each key, add the request, renew
// the key's TTL. It is a reference, to tell the script's own cost from the cost of Redis
// running any such script.
const floorScript = `local t = redis.call('TIME')
local now = t[1] .. ('00000' .. t[2]):sub(-6)
for i = 1, #KEYS do redis.call('ZRANGE', KEYS[i], '-11', '-1', 'WITHSCORES') end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[i], '3600000')
end
return {1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0}`

// variants returns PING, the policy as one decision, one call per key, redis_rate, the
// floor reference, the decision with the fraud guard added (guarded), and with two budgets
// added (budgeted).
func variants(rdb *redis.Client, refused refusals) []variant {
	for _, name := range []string{"decision", "guarded", "budgeted"} {
		refused[name] = &atomic.Int64{}
	}
	l := New(rdb, "b:")
	floor := New(rdb, "f:")
	floor.script = redis.NewScript(floorScript)
	rr := redis_rate.NewLimiter(rdb)
	gcra := map[time.Duration]redis_rate.Limit{
		time.Minute:     redis_rate.PerMinute(1),
		time.Hour:       redis_rate.PerHour(10),
		5 * time.Second: {Rate: 1, Burst: 1, Period: 5 * time.Second},
	}
	return []variant{
		{"ping", func(ctx context.Context, _ *rand.Rand) error {
			return rdb.Ping(ctx).Err()
		}},
		{"decision", func(ctx context.Context, r *rand.Rand) error {
			dec, err := l.Allow(ctx, sendPolicy(r))
			return refused.count("decision", dec, err)
		}},
		{"guarded", func(ctx context.Context, r *rand.Rand) error {
			dec, err := l.Allow(ctx, guardedPolicy(r))
			return refused.count("guarded", dec, err)
		}},
		{"budgeted", func(ctx context.Context, r *rand.Rand) error {
			dec, err := l.Allow(ctx, budgetedPolicy(r))
			return refused.count("budgeted", dec, err)
		}},
		{"perkey", func(ctx context.Context, r *rand.Rand) error {
			for _, lim := range sendPolicy(r) {
				if _, err := l.Allow(ctx, []rate.Limit{lim}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"redisrate", func(ctx context.Context, r *rand.Rand) error {
			for _, lim := range sendPolicy(r) {
				for _, rule := range lim.Rules {
					key := "b:" + lim.Scope + ":" + rate.FormatWindow(rule.Window) + ":" + lim.Key
					if _, err := rr.Allow(ctx, key, gcra[rule.Window]); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"floor", func(ctx context.Context, r *rand.Rand) error {
			_, err := floor.Allow(ctx, sendPolicy(r))
			return err
		}},
	}
}

// result is what one variant achieved.
type result struct {
	errs    int64
	elapsed time.Duration
	lat     []time.Duration
}

func (r result) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// percentile returns the latency below which the fraction p of calls finished.
func (r result) percentile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[int(p*float64(len(r.lat)-1))]
}

// measure runs decide from benchCallers goroutines for d and adds what they did to r.
func measure(v variant, d time.Duration, seed uint64, r *result) {
	ctx := context.Background()
	lat := make([][]time.Duration, benchCallers)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for i := range benchCallers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(seed, uint64(i)))
			for t0 := time.Now(); t0.Before(stop); t0 = time.Now() {
				if err := v.decide(ctx, rnd); err != nil {
					errs.Add(1)
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r.elapsed += time.Since(start)
	r.errs += errs.Load()
	r.lat = append(r.lat, slices.Concat(lat...)...)
}

// BenchmarkSendPolicy compares, in one run against one Redis, PING with the send policy
// decided as one script call, as one call per key, and by redis_rate with one call per rule,
// with the floor reference, with the fraud guard of the default configuration added
// ("guarded"), and with two budgets added ("budgeted": decision/budgeted is what budgets in
// the script call cost, 1 when nothing). The variants take turns in short slices so that drift of the machine hits
// them alike, and the ratios come from the same run. b.N is not used: the comparison takes
// the same time whatever it is.
func BenchmarkSendPolicy(b *testing.B) {
	rdb := benchClient(b)
	refused := refusals{}
	vs := variants(rdb, refused)
	const rounds, slice = 6, time.Second
	for i, v := range vs { // warm up pools and script caches
		measure(v, 200*time.Millisecond, uint64(1000+i), &result{})
	}
	results := make([]result, len(vs))
	for round := range rounds {
		for j := range vs {
			i := (round + j) % len(vs) // each round starts with another variant
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				b.Fatalf("FLUSHALL: %v", err)
			}
			measure(vs[i], slice, uint64(round*len(vs)+i), &results[i])
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "BenchmarkSendPolicy: %d callers, keyspace %d, %d rounds of %s each\n", benchCallers, benchKeyspace, rounds, slice)
	fmt.Fprintf(&out, "%-10s %12s %10s %10s %8s\n", "variant", "decisions/s", "p50", "p99", "errors")
	rate := map[string]float64{}
	for i, v := range vs {
		r := results[i]
		slices.Sort(r.lat)
		p50, p99 := r.percentile(0.50), r.percentile(0.99)
		rate[v.name] = r.rate()
		fmt.Fprintf(&out, "%-10s %12.0f %10s %10s %8d\n", v.name, r.rate(), p50.Round(time.Microsecond), p99.Round(time.Microsecond), r.errs)
		b.ReportMetric(r.rate(), v.name+"/s")
		b.ReportMetric(float64(p50.Microseconds()), v.name+"-p50-µs")
		b.ReportMetric(float64(p99.Microseconds()), v.name+"-p99-µs")
		// Errors are calls past the 200ms timeout of a machine busy with more than this
		// benchmark; they are counted, not fatal, since the limiter failing closed under
		// overload is what it should do.
		b.ReportMetric(float64(r.errs), v.name+"-errors")
	}
	for _, c := range []struct {
		of     string
		target float64
	}{{"ping", 0.6}, {"perkey", 1.8}, {"redisrate", 2.5}, {"floor", 0}, {"guarded", 0}, {"budgeted", 0}} {
		x := rate["decision"] / rate[c.of]
		target := "reference"
		if c.target > 0 {
			target = fmt.Sprintf("target >= %.1f", c.target)
		}
		fmt.Fprintf(&out, "decision/%-10s %5.2f  (%s)\n", c.of, x, target)
		b.ReportMetric(x, "x-decision-per-"+c.of)
	}
	// The guard's share of one decision is at most a third when guarded/decision >= 0.67.
	on := rate["guarded"] / rate["decision"]
	fmt.Fprintf(&out, "guarded/decision    %5.2f  (target >= 0.67: the guard's share of a decision %.0f %%, at most a third)\n", on, 100*(1-on))
	b.ReportMetric(on, "x-guarded-per-decision")
	fmt.Fprintf(&out, "refused decisions: decision %d, guarded %d, budgeted %d (admitted decisions are compared)\n",
		refused["decision"].Load(), refused["guarded"].Load(), refused["budgeted"].Load())
	b.ReportMetric(0, "ns/op")
	fmt.Print(out.String()) // b.Log would cut the table at ten lines
}

// BenchmarkMemoryPerKey fills 100,000 keys with 10 entries each through the limiter's own
// script (pipelined, only to fill quickly) on a private Redis and reports what one key costs.
func BenchmarkMemoryPerKey(b *testing.B) {
	const keys, entries = 100_000, 10
	srv := testenv.StartRedis(b)
	rdb := srv.Client()
	ctx := context.Background()
	l := New(rdb, "otp:")
	c := newClock()
	l.Clock = c.Now
	if err := l.script.Load(ctx, rdb).Err(); err != nil {
		b.Fatalf("SCRIPT LOAD: %v", err)
	}
	before := usedMemory(b, rdb)
	rules := []rate.Rule{{Limit: 1, Window: time.Minute}, {Limit: entries, Window: time.Hour}}
	for e := range entries {
		c.Add(time.Minute)
		pipe := rdb.Pipeline()
		for k := range keys {
			p, err := l.plan([]rate.Limit{{Scope: "phone", Key: "+8190" + strconv.Itoa(10_000_000+k), Rules: rules}})
			if err != nil {
				b.Fatal(err)
			}
			ks, args, _ := l.args(modeAllow, l.NewID(), p, []int{0}, undo{})
			pipe.EvalSha(ctx, l.script.Hash(), ks, args...)
			if pipe.Len() == 1000 || k == keys-1 {
				cmds, err := pipe.Exec(ctx)
				if err != nil {
					b.Fatalf("fill: %v", err)
				}
				for _, cmd := range cmds {
					if v, _ := cmd.(*redis.Cmd).Int64Slice(); len(v) == 0 || v[0] != statusAllowed {
						b.Fatalf("fill entry %d: got %v, want allowed", e, v)
					}
				}
			}
		}
	}
	n, err := rdb.DBSize(ctx).Result()
	if err != nil || n != keys {
		b.Fatalf("got %d keys (%v), want %d", n, err, keys)
	}
	sample, err := rdb.MemoryUsage(ctx, l.Key("phone", "+819010000000")).Result()
	if err != nil {
		b.Fatalf("MEMORY USAGE: %v", err)
	}
	perKey := float64(usedMemory(b, rdb)-before) / keys
	b.ReportMetric(perKey, "bytes/key")
	b.ReportMetric(float64(sample), "memory-usage-bytes")
	b.ReportMetric(0, "ns/op")
	fmt.Printf("%d keys of %d entries: %.0f bytes of Redis memory per key (target <= 400); MEMORY USAGE of one: %d\n", keys, entries, perKey, sample)
}

// usedMemory returns Redis's used_memory.
func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatalf("INFO memory: %v", err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatalf("used_memory %q: %v", v, err)
			}
			return n
		}
	}
	b.Fatal("INFO memory has no used_memory")
	return 0
}
