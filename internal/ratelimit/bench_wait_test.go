package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

// BenchmarkWaitReplicas measures what OTP_REDIS_WAIT_REPLICAS costs: the default send
// policy decided as one script call, and as one script call followed by WAIT 1 in the same
// round trip, from 64 callers against a private master with one replica that nothing else
// uses. The variants take turns as in BenchmarkSendPolicy. Most decisions of this keyspace
// admit, so nearly every one waits.
func BenchmarkWaitReplicas(b *testing.B) {
	master := testenv.StartRedis(b)
	testenv.StartReplica(b, master)
	rdb := redis.NewClient(&redis.Options{
		Addr:                  master.Addr,
		ContextTimeoutEnabled: true,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		PoolSize:              benchCallers,
	})
	b.Cleanup(func() { _ = rdb.Close() })
	plain := New(rdb, "b:")
	waiting := New(rdb, "w:", WaitReplicas(1, 200*time.Millisecond))
	decide := func(l *Limiter) func(ctx context.Context, r *rand.Rand) error {
		return func(ctx context.Context, r *rand.Rand) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond) // as the server bounds it
			defer cancel()
			_, err := l.Allow(ctx, sendPolicy(r))
			return err
		}
	}
	vs := []variant{{"decision", decide(plain)}, {"decision+wait", decide(waiting)}}
	const rounds, slice = 6, time.Second
	for i, v := range vs { // warm up pools and script caches
		measure(v, 200*time.Millisecond, uint64(2000+i), &result{})
	}
	results := make([]result, len(vs))
	for round := range rounds {
		for j := range vs {
			i := (round + j) % len(vs)
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				b.Fatalf("FLUSHALL: %v", err)
			}
			measure(vs[i], slice, uint64(3000+round*len(vs)+i), &results[i])
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "BenchmarkWaitReplicas: %d callers, keyspace %d, master with 1 replica, %d rounds of %s each\n", benchCallers, benchKeyspace, rounds, slice)
	fmt.Fprintf(&out, "%-14s %12s %10s %10s %8s\n", "variant", "decisions/s", "p50", "p99", "errors")
	rate := map[string]float64{}
	for i, v := range vs {
		r := results[i]
		slices.Sort(r.lat)
		p50, p99 := r.percentile(0.50), r.percentile(0.99)
		rate[v.name] = r.rate()
		fmt.Fprintf(&out, "%-14s %12.0f %10s %10s %8d\n", v.name, r.rate(), p50.Round(time.Microsecond), p99.Round(time.Microsecond), r.errs)
		b.ReportMetric(r.rate(), v.name+"/s")
		b.ReportMetric(float64(p50.Microseconds()), v.name+"-p50-µs")
		b.ReportMetric(float64(p99.Microseconds()), v.name+"-p99-µs")
		b.ReportMetric(float64(r.errs), v.name+"-errors")
	}
	x := rate["decision+wait"] / rate["decision"]
	fmt.Fprintf(&out, "decision+wait/decision %5.2f\n", x)
	b.ReportMetric(x, "x-wait-per-decision")
	b.ReportMetric(0, "ns/op")
	fmt.Print(out.String())
}
