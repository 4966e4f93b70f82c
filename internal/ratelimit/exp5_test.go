package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestExp5(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	l := New(rdb, "b:")
	r := rand.New(rand.NewPCG(1, 2))
	rdb.FlushAll(ctx)
	for range 200 {
		l.Allow(ctx, sendPolicy(r))
	}
	rdb.ConfigResetStat(ctx)
	for range nload() {
		l.Allow(ctx, sendPolicy(r))
	}
	for _, line := range strings.Split(rdb.Info(ctx, "commandstats").Val(), "\r\n") {
		if strings.HasPrefix(line, "cmdstat") {
			fmt.Println(line)
		}
	}
}

func nload() int {
	if os.Getenv("N") != "" {
		n := 0
		fmt.Sscan(os.Getenv("N"), &n)
		return n
	}
	return 5000
}
