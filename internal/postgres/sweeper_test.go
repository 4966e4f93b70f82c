package postgres_test

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/postgres"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// sweepLock is the sweeper's advisory lock id, as another instance would hold it.
const sweepLock int64 = 0x6f7470_7377

func TestSweeper(t *testing.T) {
	t.Run("SettlesSendsLeftSendingAndReportsTheLag", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		old := begin(t, s, 3, now.Add(-time.Hour))
		begin(t, s, 1, now.Add(-time.Second)) // young: its provider may still answer
		w := postgres.NewSweeper(s, discard(), postgres.SweeperOptions{After: time.Minute, Interval: time.Hour, BatchSize: 2})
		n, err := w.Sweep(t.Context())
		if err != nil || n != len(old) || w.Settled() != uint64(len(old)) {
			t.Fatalf("got %d settled (%d counted), err %v; want %d in batches of 2", n, w.Settled(), err, len(old))
		}
		if got := count(t, pool, `SELECT count(*) FROM sends WHERE status = 'unknown' AND created_at < now() - interval '30 minutes'`); got != len(old) {
			t.Errorf("got %d old sends unknown, want %d", got, len(old))
		}
		if lag := w.Lag(); lag < time.Second || lag > 2*time.Second {
			t.Errorf("lag: got %v, want the young send's age, 1s", lag)
		}
	})

	t.Run("OneInstanceAtATime", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		now := time.Now().UTC()
		begin(t, s, 1, now.Add(-time.Hour))
		conn, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		// Another instance sweeping holds the lock.
		if _, err := conn.Exec(t.Context(), `SELECT pg_advisory_lock($1)`, sweepLock); err != nil {
			t.Fatal(err)
		}
		w := postgres.NewSweeper(s, discard(), postgres.SweeperOptions{After: time.Minute, Interval: time.Hour})
		if n, err := w.Sweep(t.Context()); n != 0 || err != nil {
			t.Errorf("while the lock is held: got %d settled, err %v; want 0 and no error", n, err)
		}
		if lag := w.Lag(); lag < time.Hour {
			t.Errorf("lag: got %v, want the old send's hour: every instance reports it", lag)
		}
		if _, err := conn.Exec(t.Context(), `SELECT pg_advisory_unlock($1)`, sweepLock); err != nil {
			t.Fatal(err)
		}
		if n, err := w.Sweep(t.Context()); n != 1 || err != nil {
			t.Errorf("after the lock is let go: got %d settled, err %v; want 1", n, err)
		}
		if n := w.Lag(); n != 0 {
			t.Errorf("lag with nothing sending: got %v, want 0", n)
		}
	})

	t.Run("RunStopsWithItsContext", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		begin(t, s, 1, time.Now().UTC().Add(-time.Hour))
		w := postgres.NewSweeper(s, discard(), postgres.SweeperOptions{After: time.Minute, Interval: 50 * time.Millisecond})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for w.Settled() == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil || w.Settled() != 1 {
			t.Errorf("got Run error %v and %d settled, want nil and 1", err, w.Settled())
		}
	})
}
