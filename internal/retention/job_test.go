package retention_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/retention"
)

// faulty is a store whose calls can be made to fail or to be watched.
type faulty struct {
	retention.Store
	mu          sync.Mutex
	purgeFails  int // the next this many Purge calls fail
	failures    int
	limits      []int
	rollUpFroms []time.Time
	stuck       bool // RollUp never moves the boundary
}

func (f *faulty) Purge(ctx context.Context, target string, before time.Time, limit int) (int, error) {
	f.mu.Lock()
	f.limits = append(f.limits, limit)
	fail := f.purgeFails > 0
	if fail {
		f.purgeFails--
		f.failures++
	}
	f.mu.Unlock()
	if fail {
		return 0, errors.New("the database went away")
	}
	return f.Store.Purge(ctx, target, before, limit)
}

func (f *faulty) RollUp(ctx context.Context, from, before time.Time, drop int) (time.Time, int, error) {
	f.mu.Lock()
	f.rollUpFroms = append(f.rollUpFroms, from)
	stuck := f.stuck
	f.mu.Unlock()
	if stuck {
		return before.Add(-time.Hour), 0, nil
	}
	return f.Store.RollUp(ctx, from, before, drop)
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestJob(t *testing.T) {
	t.Run("RunPassesUntilItsContextEnds", func(t *testing.T) {
		t.Parallel()
		j := retention.New(oldStore(3), discard(), retention.Options{Retention: 90 * 24 * time.Hour, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- j.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for j.Purged("sends") < 3 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not stop with its context")
		}
		if j.Purged("sends") != 3 || j.Purged("verifications") != 3 || j.LastPass().IsZero() || j.RolledHours() == 0 {
			t.Errorf("got %d sends and %d verifications purged, %d hours rolled up, last pass %v; want 3, 3, some and a time",
				j.Purged("sends"), j.Purged("verifications"), j.RolledHours(), j.LastPass())
		}
	})

	t.Run("AFailedPassIsTriedAgain", func(t *testing.T) {
		t.Parallel()
		f := &faulty{Store: oldStore(2), purgeFails: 2}
		j := retention.New(f, discard(), retention.Options{Retention: 90 * 24 * time.Hour, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = j.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for j.Purged("sends") < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if j.Purged("sends") != 2 || f.failures != 2 {
			t.Errorf("got %d sends purged after %d failures, want 2 after 2", j.Purged("sends"), f.failures)
		}
	})

	t.Run("BatchesAreAtMostMaxBatch", func(t *testing.T) {
		t.Parallel()
		f := &faulty{Store: oldStore(1)}
		if _, err := retention.New(f, discard(), retention.Options{Retention: 24 * time.Hour, Batch: 20000}).Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, l := range f.limits {
			if l != retention.MaxBatch {
				t.Errorf("got a batch of %d, want %d", l, retention.MaxBatch)
			}
		}
	})

	t.Run("RollupsAreKept400DaysUnlessSaidOtherwise", func(t *testing.T) {
		t.Parallel()
		f := &faulty{Store: oldStore(1)}
		j := retention.New(f, discard(), retention.Options{Retention: 24 * time.Hour})
		now := time.Date(2030, 6, 1, 12, 30, 0, 0, time.UTC)
		j.Now = func() time.Time { return now }
		if _, err := j.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
		if want := now.Add(-retention.DefaultRollupRetention).Truncate(time.Hour); len(f.rollUpFroms) == 0 || !f.rollUpFroms[0].Equal(want) {
			t.Errorf("rolled up from %v, want %v", f.rollUpFroms, want)
		}
	})

	t.Run("NoRetentionPurgesNothing", func(t *testing.T) {
		t.Parallel()
		f := &faulty{Store: oldStore(1)}
		if _, err := retention.New(f, discard(), retention.Options{}).Pass(t.Context()); err == nil || f.limits != nil || f.rollUpFroms != nil {
			t.Errorf("got %v after %d purges and %d roll-ups, want an error and neither", err, len(f.limits), len(f.rollUpFroms))
		}
	})

	t.Run("ABoundaryThatDoesNotMoveIsAnError", func(t *testing.T) {
		t.Parallel()
		f := &faulty{Store: oldStore(1), stuck: true}
		_, err := retention.New(f, discard(), retention.Options{Retention: 24 * time.Hour}).Pass(t.Context())
		if err == nil || !strings.Contains(err.Error(), "boundary stays") {
			t.Errorf("got %v, want an error saying the boundary stays", err)
		}
		if f.limits != nil {
			t.Errorf("purged %d batches with the roll-up stuck, want none", len(f.limits))
		}
	})
}

// byDay is a store partitioned by day: it records what the job asked of it, in order.
type byDay struct {
	*memStore
	mu    sync.Mutex
	calls []string
}

func (d *byDay) PrepareDays(_ context.Context, from, through time.Time) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, "prepare "+from.Format(time.DateOnly)+" "+through.Format(time.DateOnly))
	return 2, nil
}

func (d *byDay) DropDays(_ context.Context, target string, _ time.Time) (int, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, "drop "+target)
	if target == "sends" {
		return 1, 40, nil
	}
	return 0, 0, nil
}

func (d *byDay) Purge(ctx context.Context, target string, before time.Time, limit int) (int, error) {
	d.mu.Lock()
	d.calls = append(d.calls, "purge "+target)
	d.mu.Unlock()
	return d.memStore.Purge(ctx, target, before, limit)
}

func TestJobWithDays(t *testing.T) {
	t.Run("DaysAreMadeAheadAndDroppedBeforeBatches", func(t *testing.T) {
		t.Parallel()
		d := &byDay{memStore: oldStore(1)}
		j := retention.New(d, discard(), retention.Options{Retention: 90 * 24 * time.Hour})
		now := time.Date(2030, 6, 1, 12, 30, 0, 0, time.UTC)
		j.Now = func() time.Time { return now }
		r, err := j.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := "prepare 2030-06-01 2030-06-04,drop sends,purge sends,drop verifications,purge verifications,drop rollups,purge rollups"
		if got := strings.Join(d.calls, ","); got != want {
			t.Errorf("calls: got %s, want %s", got, want)
		}
		// 40 sends in the dropped day, and the store's one old send in a batch.
		if r.Prepared != 2 || r.Dropped["sends"] != 1 || r.Purged["sends"] != 41 || j.DroppedDays("sends") != 1 || j.Purged("sends") != 41 {
			t.Errorf("got %+v, %d days and %d sends by the job; want 2 prepared, a day of 40 sends dropped and 1 purged", r, j.DroppedDays("sends"), j.Purged("sends"))
		}
	})
}
