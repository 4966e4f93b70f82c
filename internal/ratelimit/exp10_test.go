package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestExp10(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399", PoolSize: 64, ContextTimeoutEnabled: true, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	vs := variants(rdb)[:2]
	src, _ := os.ReadFile("/tmp/rlexp/floor.lua")
	fl := New(rdb, "f:")
	fl.script = redis.NewScript(string(src))
	vs = append(vs, variant{"floor", func(ctx context.Context, r *rand.Rand) error {
		_, err := fl.Allow(ctx, sendPolicy(r))
		return err
	}})
	tot := map[string]float64{}
	for round := range 4 {
		for _, v := range vs {
			rdb.FlushAll(context.Background())
			r := measure(v, time.Second, uint64(round))
			tot[v.name] += r.rate() / 4
		}
	}
	fmt.Println(tot, "decision/ping", tot["decision"]/tot["ping"], "floor/ping", tot["floor"]/tot["ping"])
}
