package testenv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

func TestStartRedis(t *testing.T) {
	ctx := context.Background()
	s := testenv.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	t.Run("StoppedServerRefuses", func(t *testing.T) {
		s.Stop()
		if err := rdb.Ping(ctx).Err(); err == nil {
			t.Fatalf("got PONG from a stopped server, want an error")
		}
	})

	t.Run("StartedAgainOnSameAddrWithoutData", func(t *testing.T) {
		addr := s.Addr
		s.Start()
		if s.Addr != addr {
			t.Errorf("got addr %s, want %s", s.Addr, addr)
		}
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("got %v, want PONG", err)
		}
		if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("got %v for a key set before the restart, want redis.Nil", err)
		}
	})

	t.Run("URLAndClientReachIt", func(t *testing.T) {
		opts, err := redis.ParseURL(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		if opts.Addr != s.Addr {
			t.Errorf("got %s, want %s", opts.Addr, s.Addr)
		}
		if err := s.Client().Ping(ctx).Err(); err != nil {
			t.Errorf("got %v, want PONG", err)
		}
	})
}
