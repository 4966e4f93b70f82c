package ratelimit

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"otpgate/lua"
)

func evalStat(t *testing.T, rdb *redis.Client) string {
	for _, line := range strings.Split(rdb.Info(context.Background(), "commandstats").Val(), "\r\n") {
		if strings.Contains(line, "evalsha") {
			return line
		}
	}
	return ""
}

func TestExp3(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	src := lua.SlidingLog
	if f := os.Getenv("SCRIPT"); f != "" {
		b, _ := os.ReadFile(f)
		src = string(b)
	}
	l := New(rdb, "b:")
	l.script = redis.NewScript(src)
	r := rand.New(rand.NewPCG(1, 2))
	for _, fresh := range []bool{true, false} {
		rdb.FlushAll(ctx)
		rdb.ConfigResetStat(ctx)
		fixed := sendPolicy(r)
		for range 10000 {
			pol := fixed
			if fresh {
				pol = sendPolicy(r)
			}
			if _, err := l.Allow(ctx, pol); err != nil {
				t.Fatal(err)
			}
		}
		t.Log("fresh", fresh, evalStat(t, rdb))
	}
}
