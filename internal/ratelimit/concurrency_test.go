package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// Many app servers racing for one key: what the limiter exists for.
const (
	racers = 2000
	rounds = 20
)

// race sends racers requests at once, spread over the limiters as over app servers and over
// the policies, and returns how many each policy had allowed. Every request must get an answer.
func race(tb testing.TB, ls []*Limiter, policies ...[]rate.Limit) []int64 {
	tb.Helper()
	allowed := make([]atomic.Int64, len(policies))
	var failed atomic.Int64
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Go(func() {
			start.Wait()
			d, err := ls[i%len(ls)].Allow(context.Background(), policies[i%len(policies)])
			switch {
			case err != nil:
				failed.Add(1)
			case d.Allowed:
				allowed[i%len(policies)].Add(1)
			}
		})
	}
	start.Done()
	done.Wait()
	if n := failed.Load(); n > 0 {
		tb.Fatalf("%d of %d calls failed", n, racers)
	}
	out := make([]int64, len(policies))
	for i := range allowed {
		out[i] = allowed[i].Load()
	}
	return out
}

func TestConcurrentAppServers(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ls := []*Limiter{New(rdb, prefix)}
	for range 2 {
		opts := *rdb.Options()
		other := redis.NewClient(&opts)
		t.Cleanup(func() { _ = other.Close() })
		ls = append(ls, New(other, prefix))
	}
	for round := range rounds {
		lim := rate.Limit{Scope: "phone", Key: fmt.Sprintf("+8190%08d", round), Rules: mustRules(t, "10/1m")}
		if got, want := race(t, ls, []rate.Limit{lim})[0], int64(10); got != want {
			t.Errorf("round %d: got %d allowed, want %d", round, got, want)
		}
		if got, want := count(t, ls[0], rdb, lim), int64(10); got != want {
			t.Errorf("round %d: got %d entries, want %d", round, got, want)
		}
	}
}
