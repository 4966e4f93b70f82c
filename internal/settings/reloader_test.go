package settings_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/notify"
	"otpgate/internal/settings"
	"otpgate/internal/testenv"
	"otpgate/internal/testenv/fixture"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// limits is the test's live setting: what a feature's type would be.
type limits struct{ Max int }

const name = "limits"

// decode is limits' decoder; a missing document is the default of 5.
func decode(doc []byte, _ int64) *limits {
	l := &limits{Max: 5}
	if doc != nil {
		_ = json.Unmarshal(doc, l)
	}
	return l
}

// set writes max as the stored limits, as an admin of another instance would.
func set(t *testing.T, store settings.Store, max int) {
	t.Helper()
	_, err := store.UpdateSetting(t.Context(), name, func([]byte) ([]byte, history.AdminAction, error) {
		doc, _ := json.Marshal(limits{Max: max})
		return doc, history.AdminAction{Action: "limits_changed", Target: "limits", Detail: "by test"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newReloader(t *testing.T, store settings.Store, n settings.Notifier, poll time.Duration) *settings.Reloader[*limits] {
	t.Helper()
	r := settings.New(settings.Stored(store, name, decode), &limits{}, n, slog.New(slog.DiscardHandler))
	r.Poll = poll
	if err := r.Load(t.Context()); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return r
}

// run runs r until the test ends.
func run(t *testing.T, r *settings.Reloader[*limits]) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestReloader(t *testing.T) {
	t.Run("TheFirstLoadReadsTheStore", func(t *testing.T) {
		store := inmem.New()
		r := settings.New(settings.Stored(store, name, decode), &limits{}, nil, slog.New(slog.DiscardHandler))
		if r.Version() != -1 || r.Snapshot().Max != 0 {
			t.Fatalf("before the load: got %+v at %d, want the initial value at -1", r.Snapshot(), r.Version())
		}
		if err := r.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r.Version() != 0 || r.Snapshot().Max != 5 {
			t.Errorf("got %+v at %d, want the default 5 at 0", r.Snapshot(), r.Version())
		}
	})

	t.Run("ANoticeOverRedisReloadsAtOnce", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		store := inmem.New()
		here := newReloader(t, store, notify.New(rdb, prefix+"limits:changed"), time.Hour)
		there := newReloader(t, store, notify.New(rdb, prefix+"limits:changed"), time.Hour) // only the notice can bring it
		run(t, there)
		time.Sleep(100 * time.Millisecond) // let the subscription start
		set(t, store, 7)
		if err := here.Changed(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := here.Snapshot().Max; got != 7 {
			t.Errorf("the changing instance: got %d, want 7 at once", got)
		}
		fixture.Eventually(t, "the notified instance", 2*time.Second, func() bool { return there.Snapshot().Max == 7 && there.Version() == 1 })
	})

	t.Run("APollReloadsWithoutNotice", func(t *testing.T) {
		store := inmem.New()
		r := newReloader(t, store, nil, 10*time.Millisecond)
		var polls atomic.Int64
		r.Every = func(_ context.Context, n int) { polls.Store(int64(n)) }
		run(t, r)
		set(t, store, 9)
		fixture.Eventually(t, "the polling instance", 2*time.Second, func() bool { return r.Snapshot().Max == 9 })
		fixture.Eventually(t, "Every", 2*time.Second, func() bool { return polls.Load() >= 2 })
	})

	t.Run("AnUnchangedVersionKeepsTheSnapshot", func(t *testing.T) {
		store := inmem.New()
		r := newReloader(t, store, nil, time.Hour)
		before := r.Snapshot()
		if err := r.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r.Snapshot() != before {
			t.Error("got a new snapshot, want the same one while the version stands")
		}
	})

	t.Run("AFailureKeepsTheLastSnapshotAndIsLoggedOncePerOutage", func(t *testing.T) {
		src := &flaky{store: inmem.New()}
		logs := &counter{}
		r := settings.New(src.source(), &limits{}, nil, slog.New(logs))
		r.Poll = 5 * time.Millisecond
		if err := r.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		good := r.Snapshot()
		src.down.Store(true)
		set(t, src.store, 11)
		if err := r.Load(t.Context()); !errors.Is(err, errDown) {
			t.Errorf("Load: got %v, want the store's error", err)
		}
		run(t, r)
		time.Sleep(100 * time.Millisecond) // many failed polls
		if r.Snapshot() != good {
			t.Errorf("got %+v, want the last good snapshot while the store fails", r.Snapshot())
		}
		if n := logs.count("reload failed"); n != 1 {
			t.Errorf("got %d failure logs, want 1 per outage", n)
		}
		src.down.Store(false)
		fixture.Eventually(t, "the reload after the outage", 2*time.Second, func() bool { return r.Snapshot().Max == 11 })
		fixture.Eventually(t, "the recovery log", 2*time.Second, func() bool { return logs.count("works again") == 1 })
	})

	t.Run("RunStopsWhenItsContextEnds", func(t *testing.T) {
		rdb, prefix := testenv.Redis(t)
		r := newReloader(t, inmem.New(), notify.New(rdb, prefix+"limits:changed"), 10*time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want context.Canceled", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Run did not return within 2s of the end of its context")
		}
	})
}

var errDown = errors.New("store down")

// flaky is a store source that fails while down is set.
type flaky struct {
	store *inmem.Store
	down  atomic.Bool
}

func (f *flaky) source() settings.Source[*limits] {
	src := settings.Stored(f.store, name, decode)
	load, version := src.Load, src.Version
	src.Load = func(ctx context.Context) (*limits, int64, error) {
		if f.down.Load() {
			return nil, 0, errDown
		}
		return load(ctx)
	}
	src.Version = func(ctx context.Context) (int64, error) {
		if f.down.Load() {
			return 0, errDown
		}
		return version(ctx)
	}
	return src
}

// counter is a slog handler that keeps the messages logged.
type counter struct {
	mu   sync.Mutex
	msgs []string
}

func (c *counter) Enabled(context.Context, slog.Level) bool { return true }
func (c *counter) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *counter) WithGroup(string) slog.Handler            { return c }
func (c *counter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, r.Message)
	return nil
}

// count is how many messages hold s.
func (c *counter) count(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}
