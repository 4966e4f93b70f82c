package fraud

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"otpgate/internal/settings"
)

// DefaultPoll is how often a Reloader compares the store's version with its own when no
// change notice arrives (settings.DefaultPoll).
const DefaultPoll = settings.DefaultPoll

// blockCountEvery is how many polls pass between counts of the active blocks.
const blockCountEvery = 10

// Reloader holds the running snapshot of the fraud configuration (the live setting
// SettingName with the lists) in a settings.Reloader, which swaps it when the version
// moves. It seeds a fresh store with the defaults and counts the active blocks for the
// gauge on the same schedule.
type Reloader struct {
	*settings.Reloader[*Snapshot]
	store    Store
	defaults Config
	log      *slog.Logger
	blocks   atomic.Pointer[[]BlockCount]

	// Now is the clock of the block counts.
	Now func() time.Time
}

// BlockCount is how many blocks of one scope and mode are active.
type BlockCount struct {
	Scope string
	Mode  Mode
	Count int
}

// NewReloader returns a reloader over store; defaults are the settings a fresh store starts
// from and that fill in settings a store lacks. notifier may be nil (polling only).
func NewReloader(store Store, notifier settings.Notifier, defaults Config, log *slog.Logger) *Reloader {
	r := &Reloader{store: store, defaults: defaults, log: log, Now: func() time.Time { return time.Now().UTC() }}
	src := settings.Source[*Snapshot]{Name: "fraud config", Load: r.load,
		Version: func(ctx context.Context) (int64, error) { return store.SettingVersion(ctx, SettingName) }}
	r.Reloader = settings.New(src, NewSnapshot(defaults, nil, -1), notifier, log)
	r.Every = func(ctx context.Context, polls int) {
		if polls%blockCountEvery == 0 {
			r.countBlocks(ctx)
		}
	}
	return r
}

// Load seeds a fresh store with the defaults and loads the first snapshot; the server
// starts serving only after it succeeded.
func (r *Reloader) Load(ctx context.Context) error {
	if _, err := SeedConfig(ctx, r.store, r.defaults.Values()); err != nil {
		return fmt.Errorf("fraud: seed the configuration: %w", err)
	}
	if err := r.Reloader.Load(ctx); err != nil {
		return err
	}
	r.countBlocks(ctx)
	return nil
}

// Defaults returns the settings the store's missing ones default to.
func (r *Reloader) Defaults() Config { return r.defaults }

// ActiveBlocks returns the active blocks per scope and mode as last counted.
func (r *Reloader) ActiveBlocks() []BlockCount {
	if b := r.blocks.Load(); b != nil {
		return *b
	}
	return nil
}

// Changed applies a change made here at once, tells the other instances about it and
// counts the blocks again.
func (r *Reloader) Changed(ctx context.Context) error {
	if err := r.Reloader.Changed(ctx); err != nil {
		return err
	}
	r.countBlocks(ctx)
	return nil
}

// load reads the settings and the lists in one snapshot.
func (r *Reloader) load(ctx context.Context) (*Snapshot, int64, error) {
	st, err := r.store.FraudState(ctx)
	if err != nil {
		return nil, 0, err
	}
	return NewSnapshot(r.configOf(st.Values), st.Entries, st.Version), st.Version, nil
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
