package ratelimit

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"otpgate/internal/otp"
)

func TestExp(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	rdb.FlushAll(ctx)
	rdb.ConfigResetStat(ctx)
	l := New(rdb, "b:")
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	t0 := time.Now()
	for range n {
		if _, err := l.Allow(ctx, sendPolicy(r)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("policy seq: %v/op", time.Since(t0)/n)
	for _, line := range strings.Split(rdb.Info(ctx, "commandstats").Val(), "\r\n") {
		if strings.Contains(line, "eval") {
			t.Log(line)
		}
	}
	rdb.ConfigResetStat(ctx)
	t0 = time.Now()
	for range n {
		rdb.Ping(ctx)
	}
	t.Logf("ping seq: %v/op", time.Since(t0)/n)
	rr := redis_rate.NewLimiter(rdb)
	t0 = time.Now()
	for range n {
		rr.Allow(ctx, "x"+time.Now().String(), redis_rate.PerMinute(1))
	}
	t.Logf("redisrate seq: %v/op", time.Since(t0)/n)
	info := rdb.Info(ctx, "commandstats").Val()
	for _, line := range strings.Split(info, "\r\n") {
		if strings.Contains(line, "eval") || strings.Contains(line, "ping") {
			t.Log(line)
		}
	}
	_ = otp.Rule{}
}
