package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// serverClient returns a client to addr configured as the server configures it: the
// caller's deadline and a 200ms read/write timeout bound every call, on the socket too.
func serverClient(tb testing.TB, base redis.Options, addr string) *redis.Client {
	tb.Helper()
	opts := base
	opts.Addr = addr
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	rdb := redis.NewClient(&opts)
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// wantUnavailable fails the test unless a decision failed closed with otp.ErrUnavailable.
func wantUnavailable(tb testing.TB, d rate.Decision, err error) {
	tb.Helper()
	if !errors.Is(err, otp.ErrUnavailable) {
		tb.Errorf("got error %v, want one wrapping otp.ErrUnavailable", err)
	}
	if d.Allowed {
		tb.Errorf("got allowed, want not allowed")
	}
}

func TestRedisFailureFailsClosed(t *testing.T) {
	ctx := context.Background()
	phone := rate.Limit{Scope: "phone", Key: "+819012345678", Rules: []rate.Rule{{Limit: 10, Window: time.Minute}}}

	t.Run("ServerDown", func(t *testing.T) {
		srv := testenv.StartRedis(t)
		l := New(serverClient(t, redis.Options{}, srv.Addr), testenv.KeyPrefix(t))
		d := mustAllow(t, l, phone)
		srv.Stop()
		got, err := l.Allow(ctx, []rate.Limit{phone})
		wantUnavailable(t, got, err)
		// The server bounds its calls with a deadline; without one, the client's dial
		// retries make each of these take over a second.
		bounded, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := l.Refund(bounded, d.Reservation); !errors.Is(err, otp.ErrUnavailable) {
			t.Errorf("Refund: got %v, want otp.ErrUnavailable", err)
		}
		if _, err := l.Inspect(bounded, phone); !errors.Is(err, otp.ErrUnavailable) {
			t.Errorf("Inspect: got %v, want otp.ErrUnavailable", err)
		}
		if err := l.Reset(bounded, phone.Scope, phone.Key); !errors.Is(err, otp.ErrUnavailable) {
			t.Errorf("Reset: got %v, want otp.ErrUnavailable", err)
		}
	})

	t.Run("ServerTooSlow", func(t *testing.T) {
		srv := testenv.StartRedis(t)
		l := New(serverClient(t, redis.Options{}, srv.Addr), testenv.KeyPrefix(t))
		mustAllow(t, l, phone)
		// Hold every client's commands for a second, far beyond the 200ms timeout.
		if err := srv.Client().Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
			t.Fatalf("CLIENT PAUSE: %v", err)
		}
		got, err := l.Allow(ctx, []rate.Limit{phone})
		wantUnavailable(t, got, err)
	})

	t.Run("CallerDeadline", func(t *testing.T) {
		srv := testenv.StartRedis(t)
		l := New(serverClient(t, redis.Options{}, srv.Addr), testenv.KeyPrefix(t))
		mustAllow(t, l, phone)
		if err := srv.Client().Do(ctx, "CLIENT", "PAUSE", "500", "ALL").Err(); err != nil {
			t.Fatalf("CLIENT PAUSE: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		got, err := l.Allow(short, []rate.Limit{phone})
		wantUnavailable(t, got, err)
	})

	t.Run("ConnectionCut", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		proxy := testenv.NewProxy(t, rdb.Options().Addr)
		l := New(serverClient(t, *rdb.Options(), proxy.Addr), prefix)
		mustAllow(t, l, phone)
		proxy.Cut()
		got, err := l.Allow(ctx, []rate.Limit{phone})
		wantUnavailable(t, got, err)
		proxy.Restore()
		if d := mustAllow(t, l, phone); !d.Allowed {
			t.Errorf("after restore: got denied, want allowed")
		}
	})

	t.Run("UnexpectedReplyIsAnErrorNotAPanic", func(t *testing.T) {
		for _, src := range []string{
			"return {1}",
			"return {1, 1, 0}",
			"return {7, 1, 0, 0}",
			"return {1, -1, 0, 0}",
			"return 'allowed'",
			"return {1, 'one', 0, 0}",
			"return redis.error_reply('ERR boom')",
		} {
			l, _ := mustLimiter(t)
			l.script = redis.NewScript(src)
			got, err := l.Allow(ctx, []rate.Limit{phone})
			wantUnavailable(t, got, err)
		}
	})
}
