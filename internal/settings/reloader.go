package settings

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultPoll is how often a Reloader compares the store's version with its own when no
// change notice arrives: with the time a reload takes, every instance applies a change
// within two seconds even when Redis pub/sub drops the notice.
const DefaultPoll = time.Second

// Source is where a Reloader reads one live setting.
type Source[T any] struct {
	// Name names the setting in logs, such as "fraud config".
	Name string
	// Load reads the value and the version it was read at, in one consistent read.
	Load func(ctx context.Context) (T, int64, error)
	// Version reads the version alone, cheaply.
	Version func(ctx context.Context) (int64, error)
}

// Stored is the Source of the document store keeps under name; decode turns the
// document (nil when none is stored) read at a version into the value. A document that
// does not decode is decode's to handle: a snapshot must exist for the server to serve.
func Stored[T any](store Store, name string, decode func(doc []byte, version int64) T) Source[T] {
	return Source[T]{
		Name: name,
		Load: func(ctx context.Context) (T, int64, error) {
			doc, v, err := store.Setting(ctx, name)
			if err != nil {
				var zero T
				return zero, 0, err
			}
			return decode(doc, v), v, nil
		},
		Version: func(ctx context.Context) (int64, error) { return store.SettingVersion(ctx, name) },
	}
}

// held is a value with the version it was read at; never changed once made.
type held[T any] struct {
	value   T
	version int64
}

// Reloader holds the running snapshot of one setting and swaps it atomically when the
// source's version moves: at once on a change notice, within Poll otherwise. Readers call
// Snapshot, which never blocks. T should be immutable (a pointer to a value nobody
// changes), since every reader shares it.
type Reloader[T any] struct {
	src      Source[T]
	notifier Notifier
	log      *slog.Logger
	current  atomic.Pointer[held[T]]
	// loading serializes loads, so that a slow read never replaces what a later one swapped in.
	loading sync.Mutex

	// Poll is how often Run compares the versions; a tenth of it at random is added, so
	// that a fleet of instances does not poll in step.
	Poll time.Duration
	// Timeout, when positive, bounds each reload of Run.
	Timeout time.Duration
	// Every, when set, runs after each poll of Run, in Run's goroutine, with the number of
	// polls so far: upkeep on the same schedule, such as counting or writing what the
	// snapshot's users noted.
	Every func(ctx context.Context, polls int)
}

// New returns a reloader serving initial at version -1 until its first load; notifier may
// be nil (polling only).
func New[T any](src Source[T], initial T, notifier Notifier, log *slog.Logger) *Reloader[T] {
	r := &Reloader[T]{src: src, notifier: notifier, log: log, Poll: DefaultPoll}
	r.current.Store(&held[T]{value: initial, version: -1})
	return r
}

// Snapshot returns the running value.
func (r *Reloader[T]) Snapshot() T { return r.current.Load().value }

// Version is the version the running value was read at; -1 before the first load.
func (r *Reloader[T]) Version() int64 { return r.current.Load().version }

// Load reads the source and swaps in its value unless it was read at the running version.
// On an error the running value stays.
func (r *Reloader[T]) Load(ctx context.Context) error {
	r.loading.Lock()
	defer r.loading.Unlock()
	v, version, err := r.src.Load(ctx)
	if err != nil {
		return fmt.Errorf("%s: load: %w", r.src.Name, err)
	}
	if version != r.Version() {
		r.current.Store(&held[T]{value: v, version: version})
	}
	return nil
}

// Reload loads the source when its version differs from the running one.
func (r *Reloader[T]) Reload(ctx context.Context) error {
	v, err := r.src.Version(ctx)
	if err != nil {
		return fmt.Errorf("%s: version: %w", r.src.Name, err)
	}
	if v == r.Version() {
		return nil
	}
	return r.Load(ctx)
}

// Changed applies a change made here at once and tells the other instances about it; a
// failed notice only leaves them to their polling.
func (r *Reloader[T]) Changed(ctx context.Context) error {
	if err := r.Load(ctx); err != nil {
		return err
	}
	if r.notifier != nil {
		if err := r.notifier.Publish(ctx); err != nil {
			r.log.Warn(r.src.Name+": change notice failed; other instances apply it at their next poll", "err", err)
		}
	}
	return nil
}

// Run follows the source until ctx ends: on every change notice and every Poll it
// reloads when the version moved. A failure keeps the running value and is retried at
// the next poll; it is logged once per outage, and the recovery once.
func (r *Reloader[T]) Run(ctx context.Context) error {
	var notices <-chan struct{}
	if r.notifier != nil {
		var err error
		if notices, err = r.notifier.Subscribe(ctx); err != nil {
			r.log.Warn(r.src.Name+": no change notices, polling only", "err", err)
		}
	}
	tick := time.NewTicker(r.Poll + time.Duration(rand.Int64N(int64(r.Poll)/10+1)))
	defer tick.Stop()
	failing := false
	for polls := 0; ; {
		polled := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-notices:
			if !ok {
				notices = nil
				continue
			}
		case <-tick.C:
			polls++
			polled = true
		}
		err := r.reload(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			r.log.Warn(r.src.Name+": reload failed; serving the last snapshot", "err", err)
			failing = true
		case err == nil && failing:
			r.log.Info(r.src.Name + ": reload works again")
			failing = false
		}
		if polled && r.Every != nil {
			r.Every(ctx, polls)
		}
	}
}

// reload is Reload under Timeout.
func (r *Reloader[T]) reload(ctx context.Context) error {
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	return r.Reload(ctx)
}
