package idempotency_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/idempotency"
	"otpgate/internal/idempotent"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// mustOpenStore returns a store over the shared Redis, under a key prefix of its own,
// and a function listing the keys it wrote.
func mustOpenStore(t *testing.T) (*idempotency.Store, *redis.Client, func() []string) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	keys := func() []string {
		ks, err := rdb.Keys(context.Background(), prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	return idempotency.New(rdb, prefix, 24*time.Hour), rdb, keys
}

var (
	bodyA = sha256.Sum256([]byte(`{"phone":"1"}`))
	bodyB = sha256.Sum256([]byte(`{"phone":"2"}`))
)

func created() idempotent.Response {
	return idempotent.Response{
		Status: 201,
		Header: http.Header{"Content-Type": {"application/json"}, "Ratelimit": {`"phone-1m";r=0;t=60`}},
		Body:   []byte(`{"id":"x"}` + "\n"),
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()

	t.Run("FirstBeginClaims", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		c, err := s.Begin(ctx, "send", "k1", bodyA)
		if err != nil || c.Replay != nil {
			t.Fatalf("got %+v, %v, want a claim", c, err)
		}
	})
	t.Run("SecondBeginWhileInFlight", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		if _, err := s.Begin(ctx, "send", "k1", bodyA); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Begin(ctx, "send", "k1", bodyA); !errors.Is(err, otp.ErrIdempotencyInFlight) {
			t.Errorf("got %v, want %v", err, otp.ErrIdempotencyInFlight)
		}
	})
	t.Run("OtherBodyIsKeyReuse", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		c, _ := s.Begin(ctx, "send", "k1", bodyA)
		if _, err := s.Begin(ctx, "send", "k1", bodyB); !errors.Is(err, otp.ErrIdempotencyKeyReused) {
			t.Errorf("in flight: got %v, want %v", err, otp.ErrIdempotencyKeyReused)
		}
		if err := s.Complete(ctx, c.Lock, created()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Begin(ctx, "send", "k1", bodyB); !errors.Is(err, otp.ErrIdempotencyKeyReused) {
			t.Errorf("completed: got %v, want %v", err, otp.ErrIdempotencyKeyReused)
		}
	})
	t.Run("CompletedIsReplayedExactly", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		c, _ := s.Begin(ctx, "send", "k1", bodyA)
		if err := s.Complete(ctx, c.Lock, created()); err != nil {
			t.Fatal(err)
		}
		again, err := s.Begin(ctx, "send", "k1", bodyA)
		if err != nil || again.Replay == nil {
			t.Fatalf("got %+v, %v, want a replay", again, err)
		}
		if !reflect.DeepEqual(*again.Replay, created()) {
			t.Errorf("got %+v, want %+v", *again.Replay, created())
		}
	})
	t.Run("KeysAreSeparatePerEndpoint", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		if _, err := s.Begin(ctx, "send", "k1", bodyA); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Begin(ctx, "other", "k1", bodyA); err != nil {
			t.Errorf("got %v, want a claim of its own", err)
		}
	})
	t.Run("ReleasedKeyCanBeClaimedAgain", func(t *testing.T) {
		s, _, _ := mustOpenStore(t)
		c, _ := s.Begin(ctx, "send", "k1", bodyA)
		if err := s.Release(ctx, c.Lock); err != nil {
			t.Fatal(err)
		}
		// Even with another body: a released key was never used.
		if _, err := s.Begin(ctx, "send", "k1", bodyB); err != nil {
			t.Errorf("got %v, want a fresh claim", err)
		}
	})
	t.Run("StaleLockNeitherReleasesNorCompletesAnothersClaim", func(t *testing.T) {
		s, rdb, keys := mustOpenStore(t)
		old, _ := s.Begin(ctx, "send", "k1", bodyA)
		// The old lock expires and another request takes the key over.
		if err := rdb.Del(ctx, keys()...).Err(); err != nil {
			t.Fatal(err)
		}
		cur, err := s.Begin(ctx, "send", "k1", bodyA)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, old.Lock); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, old.Lock, created()); !errors.Is(err, idempotency.ErrLockLost) {
			t.Errorf("complete with stale lock: got %v, want %v", err, idempotency.ErrLockLost)
		}
		if _, err := s.Begin(ctx, "send", "k1", bodyA); !errors.Is(err, otp.ErrIdempotencyInFlight) {
			t.Errorf("the current claim: got %v, want it still in flight", err)
		}
		if err := s.Complete(ctx, cur.Lock, created()); err != nil {
			t.Errorf("complete with current lock: got %v, want nil", err)
		}
	})
	t.Run("KeysAreHashedUnderThePrefix", func(t *testing.T) {
		s, _, keys := mustOpenStore(t)
		if _, err := s.Begin(ctx, "send", "my secret key\x7f", bodyA); err != nil {
			t.Fatal(err)
		}
		ks := keys()
		if len(ks) != 1 || strings.Contains(ks[0], "secret") || len(ks[0]) > 80 {
			t.Errorf("got keys %q, want one hashed key", ks)
		}
	})
}

func TestStoreTTLs(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	s := idempotency.New(rdb, prefix, 24*time.Hour)
	s.LockTTL = 30 * time.Second
	c, err := s.Begin(ctx, "send", "k1", bodyA)
	if err != nil {
		t.Fatal(err)
	}
	ks := rdb.Keys(ctx, prefix+"*").Val()
	if len(ks) != 1 {
		t.Fatalf("keys: got %v, want one", ks)
	}
	if ttl := rdb.PTTL(ctx, ks[0]).Val(); ttl <= 0 || ttl > 30*time.Second {
		t.Errorf("in-flight TTL: got %v, want (0, 30s]", ttl)
	}
	if err := s.Complete(ctx, c.Lock, created()); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, ks[0]).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("completed TTL: got %v, want about 24h", ttl)
	}
}

func TestStoreUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := testenv.StartRedis(t)
	// No retries: the server is gone for good, and backoff would only slow the test.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s := idempotency.New(rdb, testenv.KeyPrefix(t), time.Hour)
	c, err := s.Begin(ctx, "send", "k1", bodyA)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := s.Begin(ctx, "send", "k2", bodyA); !errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("begin: got %v, want %v", err, otp.ErrUnavailable)
	}
	if err := s.Complete(ctx, c.Lock, created()); !errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("complete: got %v, want %v", err, otp.ErrUnavailable)
	}
	if err := s.Release(ctx, c.Lock); !errors.Is(err, otp.ErrUnavailable) {
		t.Errorf("release: got %v, want %v", err, otp.ErrUnavailable)
	}
}

func TestStoreTimeoutFailsClosedOnSlowRedis(t *testing.T) {
	srv := testenv.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	s := idempotency.New(rdb, testenv.KeyPrefix(t), time.Hour)
	s.Timeout = 100 * time.Millisecond
	// Another connection pauses every client for 3s: without Timeout, Begin would wait
	// that out and then succeed, because the caller's context has no deadline.
	admin := srv.Client()
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", 3000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "CLIENT", "UNPAUSE") })
	_, err := s.Begin(context.Background(), "send", "slow", bodyA)
	if !errors.Is(err, otp.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("begin: got %v, want %v from the deadline", err, otp.ErrUnavailable)
	}
}

// TestSealedResponses stores a response naming an address with a sealer and finds neither
// the address nor its digits in Redis, while the replay gives the body back as it was.
func TestSealedResponses(t *testing.T) {
	ctx := context.Background()
	s, rdb, keys := mustOpenStore(t)
	k, err := pii.New([]byte("a test secret that is long enough for otpgate"), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Sealer = k
	resp := idempotent.Response{Status: 201, Body: []byte(`{"to":"+14155550123","email":"ann@example.com"}`)}
	c, err := s.Begin(ctx, "send", "k1", bodyA)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, c.Lock, resp); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys() {
		v, err := rdb.Get(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, plain := range []string{"4155550123", "ann@example.com", "ann"} {
			if strings.Contains(v, plain) {
				t.Errorf("stored record %q holds %q", v, plain)
			}
		}
	}
	c, err = s.Begin(ctx, "send", "k1", bodyA)
	if err != nil || c.Replay == nil || string(c.Replay.Body) != string(resp.Body) {
		t.Fatalf("replay %+v, %v, want the body back", c.Replay, err)
	}
	s.Sealer = nil
	if _, err := s.Begin(ctx, "send", "k1", bodyA); err == nil {
		t.Errorf("a sealed response replayed without a sealer")
	}
}

// TestForget deletes the stored responses naming one address, sealed or not, and keeps
// the others and the requests still in flight.
func TestForget(t *testing.T) {
	ctx := context.Background()
	s, _, keys := mustOpenStore(t)
	k, err := pii.New([]byte("a test secret that is long enough for otpgate"), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Sealer = k
	store := func(key, to string) {
		c, err := s.Begin(ctx, "send", key, bodyA)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, c.Lock, idempotent.Response{Status: 201, Body: []byte(`{"to":"` + to + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	store("a1", "+14155550123")
	store("a2", "+14155550123")
	store("b1", "+14155550124")
	if _, err := s.Begin(ctx, "send", "in-flight", bodyA); err != nil {
		t.Fatal(err)
	}
	n, err := s.Forget(ctx, "+14155550123")
	if err != nil || n != 2 {
		t.Fatalf("Forget: %d, %v, want 2 deleted", n, err)
	}
	if got := len(keys()); got != 2 {
		t.Errorf("%d records left, want the other address's and the one in flight", got)
	}
	if c, err := s.Begin(ctx, "send", "b1", bodyA); err != nil || c.Replay == nil {
		t.Errorf("the other address's response: %+v, %v, want it replayed", c, err)
	}
}
