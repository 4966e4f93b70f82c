package fraud

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// DefaultPoll is how often a Reloader compares the store's version with its own when no
// change notification arrives: with the time a reload takes, every instance applies a
// change within two seconds even when Redis pub/sub drops the notification.
const DefaultPoll = time.Second

// blockCountEvery is how many polls pass between counts of the active blocks.
const blockCountEvery = 10

// Reloader holds the running snapshot of the fraud configuration and swaps it atomically
// when the store's version moves: at once on a change notification, and within Poll
// otherwise. Readers call Snapshot, which never blocks.
type Reloader struct {
	store    Store
	notifier Notifier
	defaults Config
	log      *slog.Logger

	current atomic.Pointer[Snapshot]
	blocks  atomic.Pointer[[]BlockCount]

	// Poll is how often the version is compared; Now is the clock of the block counts.
	Poll time.Duration
	Now  func() time.Time
}

// BlockCount is how many blocks of one scope and mode are active.
type BlockCount struct {
	Scope string
	Mode  Mode
	Count int
}

// NewReloader returns a reloader over store; defaults are the settings a fresh store starts
// from and that fill in settings a store lacks. notifier may be nil (polling only).
func NewReloader(store Store, notifier Notifier, defaults Config, log *slog.Logger) *Reloader {
	r := &Reloader{store: store, notifier: notifier, defaults: defaults, log: log, Poll: DefaultPoll,
		Now: func() time.Time { return time.Now().UTC() }}
	r.current.Store(NewSnapshot(defaults, nil, -1))
	return r
}

// Load seeds a fresh store with the defaults and loads the first snapshot; the server
// starts serving only after it succeeded.
func (r *Reloader) Load(ctx context.Context) error {
	if _, err := r.store.SeedFraudConfig(ctx, r.defaults.Values()); err != nil {
		return fmt.Errorf("fraud: seed the configuration: %w", err)
	}
	if err := r.load(ctx); err != nil {
		return err
	}
	r.countBlocks(ctx)
	return nil
}

// Snapshot returns the running configuration.
func (r *Reloader) Snapshot() *Snapshot { return r.current.Load() }

// Defaults returns the settings the store's missing ones default to.
func (r *Reloader) Defaults() Config { return r.defaults }

// ActiveBlocks returns the active blocks per scope and mode as last counted.
func (r *Reloader) ActiveBlocks() []BlockCount {
	if b := r.blocks.Load(); b != nil {
		return *b
	}
	return nil
}

// Run follows the store until ctx ends: on every notification and every Poll it reloads
// when the version moved. Failures are logged and retried at the next poll.
func (r *Reloader) Run(ctx context.Context) error {
	var pushes <-chan struct{}
	if r.notifier != nil {
		var err error
		if pushes, err = r.notifier.Subscribe(ctx); err != nil {
			r.log.Warn("fraud config: no change notifications, polling only", "err", err)
		}
	}
	// A little jitter keeps a fleet of instances from polling in step.
	tick := time.NewTicker(r.Poll + time.Duration(rand.Int64N(int64(r.Poll)/10+1)))
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-pushes:
			if !ok {
				pushes = nil
				continue
			}
		case <-tick.C:
			if n%blockCountEvery == 0 {
				r.countBlocks(ctx)
			}
		}
		if err := r.Reload(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("fraud config: reload failed", "err", err)
		}
	}
}

// Reload loads a new snapshot when the store's version differs from the running one.
func (r *Reloader) Reload(ctx context.Context) error {
	v, err := r.store.FraudVersion(ctx)
	if err != nil {
		return fmt.Errorf("fraud: version: %w", err)
	}
	if v == r.Snapshot().Version {
		return nil
	}
	return r.load(ctx)
}

// Changed applies a change made here at once and tells the other instances about it; a
// failed notification only leaves them to their polling.
func (r *Reloader) Changed(ctx context.Context) error {
	if err := r.load(ctx); err != nil {
		return err
	}
	r.countBlocks(ctx)
	if r.notifier != nil {
		if err := r.notifier.Publish(ctx); err != nil {
			r.log.Warn("fraud config: change notification failed; other instances apply it at their next poll", "err", err)
		}
	}
	return nil
}

// load reads the store and swaps in its snapshot.
func (r *Reloader) load(ctx context.Context) error {
	st, err := r.store.FraudState(ctx)
	if err != nil {
		return fmt.Errorf("fraud: load: %w", err)
	}
	r.current.Store(NewSnapshot(r.configOf(st.Values), st.Entries, st.Version))
	return nil
}

// configOf is the defaults with the stored settings applied; a stored setting this version
// cannot read (written by a newer one, say) keeps its default.
func (r *Reloader) configOf(stored map[string]string) Config {
	c := r.defaults
	for name, text := range stored {
		next := c
		if err := next.Set(name, text); err != nil {
			r.log.Warn("fraud config: stored setting ignored", "setting", name, "err", err)
			continue
		}
		c = next
	}
	if err := c.Validate(); err != nil {
		r.log.Warn("fraud config: stored settings are out of bounds; the defaults apply", "err", err)
		return r.defaults
	}
	return c
}

// countBlocks counts the active blocks for the gauge; a failure keeps the last count.
func (r *Reloader) countBlocks(ctx context.Context) {
	now := r.Now()
	blocks, err := r.store.FraudBlocks(ctx, BlockFilter{Now: now})
	if err != nil {
		r.log.Warn("fraud: counting active blocks failed", "err", err)
		return
	}
	counts := map[[2]string]int{}
	for _, b := range blocks {
		counts[[2]string{b.Scope, string(b.Mode)}]++
	}
	out := make([]BlockCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, BlockCount{Scope: k[0], Mode: Mode(k[1]), Count: n})
	}
	r.blocks.Store(&out)
}
