package ratelimit

import (
	"context"
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
	"otpgate/internal/testenv"
)

// The benchmarks model the send endpoint of a busy server: 64 callers at once, phones and
// client addresses drawn from a million each, and the default send policy.
const (
	benchCallers  = 64
	benchKeyspace = 1_000_000
)

// sendPolicy returns the default send policy for request n of the keyspace: phone 1/1m,10/1h,
// IP 1/1m,10/1h, and one send per phone and client per 5s.
func sendPolicy(r *rand.Rand) []otp.Limit {
	phone := "+8190" + strconv.Itoa(10_000_000+r.IntN(benchKeyspace))
	n := r.IntN(benchKeyspace)
	ip := "10." + strconv.Itoa(n>>16) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255)
	perKey := []otp.Rule{{Limit: 1, Window: time.Minute}, {Limit: 10, Window: time.Hour}}
	return []otp.Limit{
		{Scope: "phone", Key: phone, Rules: perKey},
		{Scope: "ip", Key: ip, Rules: perKey},
		{Scope: "dup", Key: phone + "|" + ip, Rules: []otp.Rule{{Limit: 1, Window: 5 * time.Second}}},
	}
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

// variants returns PING, the policy as one decision, one call per key, and redis_rate.
func variants(rdb *redis.Client) []variant {
	l := New(rdb, "b:")
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
			_, err := l.Allow(ctx, sendPolicy(r))
			return err
		}},
		{"perkey", func(ctx context.Context, r *rand.Rand) error {
			for _, lim := range sendPolicy(r) {
				if _, err := l.Allow(ctx, []otp.Limit{lim}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"redisrate", func(ctx context.Context, r *rand.Rand) error {
			for _, lim := range sendPolicy(r) {
				for _, rule := range lim.Rules {
					key := "b:" + lim.Scope + ":" + otp.FormatWindow(rule.Window) + ":" + lim.Key
					if _, err := rr.Allow(ctx, key, gcra[rule.Window]); err != nil {
						return err
					}
				}
			}
			return nil
		}},
	}
}

// result is what one variant achieved.
type result struct {
	ops      int
	errs     int64
	elapsed  time.Duration
	p50, p99 time.Duration
}

func (r result) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// measure runs decide from benchCallers goroutines for d and returns the rate and latencies.
func measure(v variant, d time.Duration, seed uint64) result {
	ctx := context.Background()
	lat := make([][]time.Duration, benchCallers)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for i := range benchCallers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			for t0 := time.Now(); t0.Before(stop); t0 = time.Now() {
				if err := v.decide(ctx, r); err != nil {
					errs.Add(1)
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	return result{
		ops: len(all), errs: errs.Load(), elapsed: time.Since(start),
		p50: all[len(all)/2], p99: all[len(all)*99/100],
	}
}

// BenchmarkSendPolicy compares, in one run against one Redis, PING with the send policy
// decided as one script call, as one call per key, and by redis_rate with one call per rule.
// The variants take turns in short rounds so that drift of the machine hits them alike, and
// the ratios are computed from the same run. b.N is not used: every run takes the same time.
func BenchmarkSendPolicy(b *testing.B) {
	rdb := benchClient(b)
	vs := variants(rdb)
	const rounds, slice = 4, time.Second
	for i, v := range vs { // warm up pools and script caches
		measure(v, 200*time.Millisecond, uint64(1000+i))
	}
	total := make([]result, len(vs))
	for round := range rounds {
		for i, v := range vs {
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				b.Fatalf("FLUSHALL: %v", err)
			}
			r := measure(v, slice, uint64(round*len(vs)+i))
			t := &total[i]
			t.ops += r.ops
			t.errs += r.errs
			t.elapsed += r.elapsed
			// Percentiles of a whole run would need every sample; the mean of the rounds'
			// percentiles is close enough to compare variants.
			t.p50 += r.p50 / rounds
			t.p99 += r.p99 / rounds
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d callers, keyspace %d, %d rounds of %s each\n", benchCallers, benchKeyspace, rounds, slice)
	fmt.Fprintf(&out, "%-10s %12s %10s %10s %8s\n", "variant", "decisions/s", "p50", "p99", "errors")
	for i, v := range vs {
		t := total[i]
		fmt.Fprintf(&out, "%-10s %12.0f %10s %10s %8d\n", v.name, t.rate(), t.p50.Round(time.Microsecond), t.p99.Round(time.Microsecond), t.errs)
		b.ReportMetric(t.rate(), v.name+"/s")
		b.ReportMetric(float64(t.p50.Microseconds()), v.name+"-p50-µs")
		b.ReportMetric(float64(t.p99.Microseconds()), v.name+"-p99-µs")
		if t.errs > 0 {
			b.Errorf("%s: %d errors", v.name, t.errs)
		}
	}
	decision := total[1].rate()
	ratios := []struct {
		name   string
		of     float64
		target float64
	}{
		{"decision/ping", total[0].rate(), 0.6},
		{"decision/perkey", total[2].rate(), 1.8},
		{"decision/redisrate", total[3].rate(), 2.5},
	}
	for _, r := range ratios {
		fmt.Fprintf(&out, "%-20s %5.2f (target >= %.1f)\n", r.name, decision/r.of, r.target)
		b.ReportMetric(decision/r.of, "x-"+strings.ReplaceAll(r.name, "/", "-per-"))
	}
	b.ReportMetric(0, "ns/op")
	b.Log("\n" + out.String())
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
	rules := []otp.Rule{{Limit: 1, Window: time.Minute}, {Limit: entries, Window: time.Hour}}
	for e := range entries {
		c.Add(time.Minute)
		pipe := rdb.Pipeline()
		for k := range keys {
			p, err := l.plan([]otp.Limit{{Scope: "phone", Key: "+8190" + strconv.Itoa(10_000_000+k), Rules: rules}})
			if err != nil {
				b.Fatal(err)
			}
			ks, args, _ := l.args(modeAllow, l.NewID(), p, []int{0})
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
	b.Logf("%d keys of %d entries: %.0f bytes per key (target <= 400); MEMORY USAGE of one: %d", keys, entries, perKey, sample)
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
