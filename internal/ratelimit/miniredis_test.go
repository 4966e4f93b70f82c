package ratelimit

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

// mustMiniredisLimiter returns a limiter on a miniredis of the calling test, as dev mode runs
// it, and a client to look at its keys. The scenarios that run on real Redis run here too
// (see onBackends), proving that dev mode runs the very same script.
func mustMiniredisLimiter(tb testing.TB) (*Limiter, *redis.Client) {
	tb.Helper()
	m := miniredis.RunT(tb)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	tb.Cleanup(func() { _ = rdb.Close() })
	return New(rdb, testenv.KeyPrefix(tb)), rdb
}
