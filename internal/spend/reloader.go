package spend

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// DefaultPoll is how often a Reloader compares the store's version with its own when no
// change notification arrives, so that every instance applies a change within two seconds
// even when Redis pub/sub drops the notification.
const DefaultPoll = time.Second

// Reloader holds the running snapshot of the spend configuration and swaps it atomically
// when the store's version moves: at once on a change notification, within Poll otherwise.
// Readers call Snapshot, which never blocks.
type Reloader struct {
	store    Store
	notifier Notifier
	defaults Config
	log      *slog.Logger
	current  atomic.Pointer[Snapshot]

	// Poll is how often the version is compared.
	Poll time.Duration
}

// NewReloader returns a reloader over store; defaults is the configuration of a store that
// holds none. notifier may be nil (polling only).
func NewReloader(store Store, notifier Notifier, defaults Config, log *slog.Logger) *Reloader {
	r := &Reloader{store: store, notifier: notifier, defaults: defaults, log: log, Poll: DefaultPoll}
	r.current.Store(NewSnapshot(defaults, -1))
	return r
}

// Snapshot returns the running configuration.
func (r *Reloader) Snapshot() *Snapshot { return r.current.Load() }

// Defaults returns the configuration of a store that holds none.
func (r *Reloader) Defaults() Config { return r.defaults }

// Load loads the first snapshot; the server starts serving only after it succeeded.
func (r *Reloader) Load(ctx context.Context) error { return r.load(ctx) }

// Run follows the store until ctx ends: on every notification and every Poll it reloads
// when the version moved. Failures are logged and retried at the next poll.
func (r *Reloader) Run(ctx context.Context) error {
	var pushes <-chan struct{}
	if r.notifier != nil {
		var err error
		if pushes, err = r.notifier.Subscribe(ctx); err != nil {
			r.log.Warn("spend config: no change notifications, polling only", "err", err)
		}
	}
	// A little jitter keeps a fleet of instances from polling in step.
	tick := time.NewTicker(r.Poll + time.Duration(rand.Int64N(int64(r.Poll)/10+1)))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-pushes:
			if !ok {
				pushes = nil
				continue
			}
		case <-tick.C:
		}
		if err := r.Reload(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("spend config: reload failed", "err", err)
		}
	}
}

// Reload loads a new snapshot when the store's version differs from the running one.
func (r *Reloader) Reload(ctx context.Context) error {
	v, err := r.store.SpendVersion(ctx)
	if err != nil {
		return fmt.Errorf("spend: version: %w", err)
	}
	if v == r.Snapshot().Version {
		return nil
	}
	return r.load(ctx)
}

// Changed applies a change made here at once and tells the other instances; a failed
// notification only leaves them to their polling.
func (r *Reloader) Changed(ctx context.Context) error {
	if err := r.load(ctx); err != nil {
		return err
	}
	if r.notifier != nil {
		if err := r.notifier.Publish(ctx); err != nil {
			r.log.Warn("spend config: change notification failed; other instances apply it at their next poll", "err", err)
		}
	}
	return nil
}

func (r *Reloader) load(ctx context.Context) error {
	raw, v, err := r.store.SpendConfig(ctx)
	if err != nil {
		return fmt.Errorf("spend: load: %w", err)
	}
	c := r.defaults
	if raw != nil {
		if c, err = DecodeConfig(raw); err != nil {
			// Written by a newer version, say: keep serving with the defaults, loudly.
			r.log.Error("spend config: the stored configuration is not valid; the defaults apply", "err", err)
			c = r.defaults
		}
	}
	r.current.Store(NewSnapshot(c, v))
	return nil
}
