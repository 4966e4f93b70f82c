package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv/fixture"
)

const localRedisURL = "redis://127.0.0.1:6379/0"

// Redis returns a client to the shared Redis and a key prefix unique to this test; the client
// is closed and the keys under the prefix are deleted at cleanup.
func Redis(tb testing.TB) (*redis.Client, string) {
	tb.Helper()
	u := RedisURL(tb)
	opts, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatalf("testenv: parse redis url: %v", err)
	}
	prefix := KeyPrefix(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := fixture.DeleteKeys(ctx, u, prefix); err != nil {
			tb.Errorf("testenv: delete keys %s*: %v", prefix, err)
		}
	})
	rdb := redis.NewClient(opts)
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb, prefix
}

// RedisURL returns redis://host:port/db of the shared Redis, skipping or failing the test when
// there is none.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	NeedsService(tb, "Redis")
	u, err := shared.redis.get(findRedis)
	if err != nil {
		unavailable(tb, "Redis", err, "redis-server")
	}
	return u
}

// KeyPrefix returns a random key prefix like "t:3f9a1c2b:", so tests can share one Redis.
func KeyPrefix(tb testing.TB) string {
	return "t:" + randomHex(tb, 4) + ":"
}

// randomHex returns n random bytes as hex.
func randomHex(tb testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("testenv: random: %v", err)
	}
	return hex.EncodeToString(b)
}

// findRedis picks REDIS_URL, then the local port, then a throw-away server.
func findRedis() (string, error) {
	var tried []error
	if u := os.Getenv("REDIS_URL"); u != "" {
		err := pingRedisURL(u)
		if err == nil {
			return u, nil
		}
		tried = append(tried, fmt.Errorf("REDIS_URL does not answer: %w", err))
	}
	if os.Getenv("OTPGATE_TESTENV_NO_LOCAL") == "" {
		err := pingRedisURL(localRedisURL)
		if err == nil {
			return localRedisURL, nil
		}
		tried = append(tried, fmt.Errorf("nothing on 127.0.0.1:6379: %w", err))
	}
	s, err := startSharedRedis()
	if err != nil {
		return "", errors.Join(append(tried, err)...)
	}
	return s.URL(), nil
}

// pingRedisURL checks quickly that a Redis answers at u.
func pingRedisURL(u string) error {
	opts, err := redis.ParseURL(u)
	if err != nil {
		return err
	}
	// a plain dial first: go-redis logs every failed dial of its pool
	c, err := net.DialTimeout("tcp", opts.Addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	c.Close()
	opts.DialTimeout, opts.ReadTimeout, opts.MaxRetries = 500*time.Millisecond, time.Second, -1
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return rdb.Ping(ctx).Err()
}

// startSharedRedis starts the throw-away Redis that lives until Main stops it.
func startSharedRedis() (*RedisServer, error) {
	dir, err := os.MkdirTemp("", "otpgate-redis-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := newRedisServer(dir, port, nil)
	if err := atExit(func() { s.close(); os.RemoveAll(dir) }); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, fmt.Errorf("throw-away redis-server: %w", err)
	}
	return s, nil
}
