package ratelimit

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"otpgate/lua"
	"otpgate/internal/otp"
)

func TestExp7(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:"+port()+""})
	src := lua.SlidingLog
	if m := os.Getenv("CUT"); m != "" {
		src = cut(m)
	}
	if f := os.Getenv("SCRIPT"); f != "" {
		b, _ := os.ReadFile(f)
		src = string(b)
	}
	l := New(rdb, "b:")
	l.script = redis.NewScript(src)
	r := rand.New(rand.NewPCG(1, 2))
	fixed := sendPolicy(r)
	if os.Getenv("FEWARGS") != "" {
		keys := []string{"b:{a:1}", "b:{b:2}", "b:{c:3}"}
		for range nload() {
			l.script.Run(ctx, rdb, keys, "allow", "abcdefghijk", "", "2,1,60000,10,3600000,2,1,60000,10,3600000,1,1,5000")
		}
		return
	}
	if os.Getenv("NOARGS") != "" {
		for range nload() {
			l.script.Run(ctx, rdb, nil)
		}
		return
	}
	if os.Getenv("PING") != "" {
		for range nload() {
			rdb.Ping(ctx)
		}
		return
	}
	if os.Getenv("PERKEY") != "" {
		for range nload() {
			for _, lim := range sendPolicy(r) {
				l.Allow(ctx, []otp.Limit{lim})
			}
		}
		return
	}
	for range nload() {
		p := sendPolicy(r)
		if os.Getenv("FIXED") != "" {
			p = fixed
		}
		l.Allow(ctx, p)
	}
}

func port() string {
	if p := os.Getenv("PORT"); p != "" {
		return p
	}
	return "6399"
}
