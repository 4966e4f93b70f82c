package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

// The budgets of the calls in these tests, which the service gives as OTP_REDIS_TIMEOUT:
// calls that must succeed get time enough for a machine busy with other tests; those
// that must fail closed, OTP_REDIS_TIMEOUT's default, so that they fail fast.
const (
	ample       = 2 * time.Second
	waitTimeout = 200 * time.Millisecond
)

// bounded calls Allow as the service does: within a budget.
func bounded(l *Limiter, budget time.Duration, limits ...rate.Limit) (rate.Decision, error) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	return l.Allow(ctx, limits)
}

// readReplica returns a client that reads from the replica at addr, of a cluster too.
func readReplica(tb testing.TB, addr string, cluster bool) *redis.Client {
	tb.Helper()
	opts := &redis.Options{Addr: addr}
	if cluster {
		opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }
	}
	rdb := redis.NewClient(opts)
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// caughtUp waits until the replicas of the master rdb talks to hold all its writes.
func caughtUp(tb testing.TB, rdb *redis.Client, n int) {
	tb.Helper()
	if got, err := rdb.Wait(context.Background(), n, 10*time.Second).Result(); err != nil || got < int64(n) {
		tb.Fatalf("WAIT %d: got %d (%v), want the replicas caught up", n, got, err)
	}
}

func TestWaitReplicas(t *testing.T) {
	master := testenv.StartRedis(t)
	replica := testenv.StartReplica(t, master)
	rdb := serverClient(t, redis.Options{}, master.Addr)
	onReplica := readReplica(t, replica.Addr, false)
	phone := func(n int) rate.Limit {
		return rate.Limit{Scope: "phone", Key: fmt.Sprintf("+8190%08d", n), Rules: mustRules(t, "1/1m")}
	}

	t.Run("AllowedDecisionIsOnTheReplica", func(t *testing.T) {
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(1, ample))
		d, err := bounded(l, ample, phone(1))
		if err != nil || !d.Allowed {
			t.Fatalf("got allowed %v (%v), want allowed", d.Allowed, err)
		}
		// WAIT came back with the replica's acknowledgement, so it holds the entry already.
		if got := count(t, l, onReplica, phone(1)); got != 1 {
			t.Errorf("replica: got %d entries, want 1", got)
		}
	})

	t.Run("TooFewReplicasFailsClosedAndRefunds", func(t *testing.T) {
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(2, waitTimeout))
		d, err := bounded(l, waitTimeout, phone(2))
		wantUnavailable(t, d, err)
		if got := count(t, l, rdb, phone(2)); got != 0 {
			t.Errorf("master: got %d entries, want 0 (refunded)", got)
		}
	})

	t.Run("DeniedDecisionNeedsNoReplicas", func(t *testing.T) {
		prefix := testenv.KeyPrefix(t)
		mustAllow(t, New(rdb, prefix), phone(3))
		// WAIT waits in vain, and may answer after the socket's deadline: the denial stands.
		d, err := bounded(New(rdb, prefix, WaitReplicas(2, waitTimeout)), waitTimeout, phone(3))
		if err != nil || d.Allowed || len(d.Violations()) != 1 {
			t.Errorf("got allowed %v, violations %+v (%v), want denied by the phone rule", d.Allowed, d.Violations(), err)
		}
	})

	t.Run("RetriedDecisionFailsClosed", func(t *testing.T) {
		// A retry on another connection finds the reservation its first attempt made; WAIT on
		// the retry's connection says nothing about that write.
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(1, ample))
		l.NewID = func() string { return "fixed-id-03" }
		if d, err := bounded(l, ample, phone(4)); err != nil || !d.Allowed {
			t.Fatalf("first: got allowed %v (%v), want allowed", d.Allowed, err)
		}
		d, err := bounded(l, ample, phone(4))
		wantUnavailable(t, d, err)
		if got := count(t, l, rdb, phone(4)); got != 0 {
			t.Errorf("master: got %d entries, want 0 (refunded)", got)
		}
	})

	t.Run("LaggingReplicaFailsClosedAndRefunds", func(t *testing.T) {
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(1, waitTimeout))
		replica.Pause()
		d, err := bounded(l, waitTimeout, phone(5))
		inspected := count(t, l, rdb, phone(5))
		replica.Resume()
		wantUnavailable(t, d, err)
		if inspected != 0 {
			t.Errorf("master: got %d entries, want 0 (refunded)", inspected)
		}
		caughtUp(t, rdb, 1)
		if d, err := bounded(l, ample, phone(5)); err != nil || !d.Allowed {
			t.Errorf("after the replica caught up: got allowed %v (%v), want allowed", d.Allowed, err)
		}
	})

	t.Run("CheckPoliciesToo", func(t *testing.T) {
		// The option belongs to the limiter, so checks wait as sends do.
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(2, waitTimeout))
		check := rate.Limit{Scope: otp.ScopeCheckPhone, Key: "+819000000006", Rules: mustRules(t, "10/1h")}
		d, err := bounded(l, waitTimeout, check)
		wantUnavailable(t, d, err)
	})
}

func TestWaitFor(t *testing.T) {
	w := &waiter{timeout: 200 * time.Millisecond}
	ctx := context.Background()
	if got := w.waitFor(ctx); got != 100*time.Millisecond {
		t.Errorf("no deadline: got %v, want half the option's 200ms", got)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if got := w.waitFor(short); got > 50*time.Millisecond || got < 25*time.Millisecond {
		t.Errorf("100ms left: got %v, want half of what is left", got)
	}
	gone, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if got := w.waitFor(gone); got != time.Millisecond {
		t.Errorf("deadline passed: got %v, want 1ms, never WAIT's 0 (for ever)", got)
	}
	if got := (&waiter{}).waitFor(ctx); got != waitBound/2 {
		t.Errorf("no timeout, no deadline: got %v, want %v", got, waitBound/2)
	}
}

func TestWaitReplicasCluster(t *testing.T) {
	cluster := testenv.RedisClusterWithReplicas(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: cluster.Addrs, ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: ample, WriteTimeout: ample,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	// twoSlots puts the phone on the first master and the IP on the third.
	replicaOf := func(l *Limiter, lim rate.Limit) *testenv.RedisServer {
		s := slot(l.Key(lim.Scope, lim.Key))
		for i, addr := range cluster.Replicas {
			if cluster.HasSlot(i, s) {
				return cluster.Node(addr)
			}
		}
		t.Fatalf("no master has slot %d", s)
		return nil
	}

	t.Run("AllowedDecisionIsOnEveryReplica", func(t *testing.T) {
		l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(1, ample))
		phone, ip := twoSlots(t, l, "1/1m", true, 1)
		if d, err := bounded(l, ample, phone, ip); err != nil || !d.Allowed {
			t.Fatalf("got allowed %v (%v), want allowed", d.Allowed, err)
		}
		for _, lim := range []rate.Limit{phone, ip} {
			r := readReplica(t, replicaOf(l, lim).Addr, true)
			if got := count(t, l, r, lim); got != 1 {
				t.Errorf("%s on its replica: got %d entries, want 1", lim.Scope, got)
			}
		}
	})

	for _, phoneFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("LaggingReplicaRefundsEverySlot/PhoneSlotFirst=%v", phoneFirst), func(t *testing.T) {
			l := New(rdb, testenv.KeyPrefix(t), WaitReplicas(1, waitTimeout))
			phone, ip := twoSlots(t, l, "1/1m", phoneFirst, 2)
			// The IP's replica lags: decided first, its slot is refunded at once; decided
			// second, the phone's slot, admitted and replicated, is refunded with it.
			lagging := replicaOf(l, ip)
			lagging.Pause()
			d, err := bounded(l, waitTimeout, phone, ip)
			phoneLeft, ipLeft := count(t, l, rdb, phone), count(t, l, rdb, ip)
			lagging.Resume()
			wantUnavailable(t, d, err)
			if phoneLeft != 0 || ipLeft != 0 {
				t.Errorf("got %d phone and %d ip entries, want 0 and 0 (refunded)", phoneLeft, ipLeft)
			}
			master, err := rdb.MasterForKey(context.Background(), l.Key(ip.Scope, ip.Key))
			if err != nil {
				t.Fatal(err)
			}
			caughtUp(t, master, 1)
		})
	}
}
