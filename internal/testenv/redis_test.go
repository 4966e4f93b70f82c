package testenv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/testenv"
)

func TestRedis(t *testing.T) {
	ctx := context.Background()

	t.Run("PrefixesDiffer", func(t *testing.T) {
		a, b := testenv.KeyPrefix(t), testenv.KeyPrefix(t)
		if a == b {
			t.Fatalf("got %q twice, want two distinct prefixes", a)
		}
		if !strings.HasPrefix(a, "t:") || !strings.HasSuffix(a, ":") {
			t.Fatalf("got %q, want t:<hex>:", a)
		}
	})

	t.Run("ClientAnswers", func(t *testing.T) {
		rdb, _ := testenv.Redis(t)
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("got %v, want PONG", err)
		}
	})

	t.Run("CleanupDeletesOnlyOwnKeys", func(t *testing.T) {
		rdb, other := testenv.Redis(t)
		otherKey := other + "stays"
		if err := rdb.Set(ctx, otherKey, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		var prefix string
		t.Run("Inner", func(t *testing.T) {
			inner, p := testenv.Redis(t)
			prefix = p
			for _, k := range []string{"a", "b", "{tag}c"} {
				if err := inner.Set(ctx, p+k, "v", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
		})
		n, err := countKeys(ctx, rdb, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("got %d keys under %s after cleanup, want 0", n, prefix)
		}
		if got, err := rdb.Get(ctx, otherKey).Result(); err != nil || got != "1" {
			t.Errorf("got %q, %v for another test's key, want \"1\"", got, err)
		}
	})

	t.Run("URLMatchesClient", func(t *testing.T) {
		u := testenv.RedisURL(t)
		opts, err := redis.ParseURL(u)
		if err != nil {
			t.Fatalf("got %v parsing %q, want a redis URL", err, u)
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatalf("got %v, want PONG", err)
		}
	})
}

// countKeys counts the keys under prefix.
func countKeys(ctx context.Context, rdb *redis.Client, prefix string) (int, error) {
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	return len(keys), err
}
