package ratelimit

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestExp6(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399", PoolSize: 64, ContextTimeoutEnabled: true, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	rdb.FlushAll(context.Background())
	vs := variants(rdb)
	for _, v := range vs {
		if os.Getenv("V") != "" && v.name != os.Getenv("V") {
			continue
		}
		r := measure(v, 8*time.Second, 1)
		fmt.Println(v.name, r.rate(), r.p50, r.p99, r.errs)
	}
}
