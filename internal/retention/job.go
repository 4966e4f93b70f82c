package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Job.
type Options struct {
	// Retention is how long history is kept; it is cut at whole hours, so a row goes
	// between Retention and Retention plus an hour and an Interval after it was created.
	// It must be positive: a pass without one fails rather than purge everything.
	Retention time.Duration
	// Rollups is how long hourly rollups are kept (default DefaultRollupRetention).
	Rollups time.Duration
	// Interval is the pause between passes; each is jittered by up to a fifth (default
	// DefaultInterval).
	Interval time.Duration
	// Batch is the most rows one statement deletes (default and at most MaxBatch).
	Batch int
	// PrefixDrop is the fraud guard's running prefix setting (nil: 4, its default).
	PrefixDrop func() int
}

// Job rolls up and purges history, pass after pass. It runs on every instance; a pass
// holds the store's lifecycle lock, so one instance at a time does the work, and the others
// only measure how far behind it is.
type Job struct {
	store Store
	log   *slog.Logger
	opts  Options

	// Now is the clock that says what is old; tests replace it.
	Now func() time.Time

	targets []Target
	purged  map[string]*atomic.Uint64
	dropped map[string]*atomic.Uint64
	mu      sync.Mutex
	behind  map[string]time.Duration
	rolled  atomic.Uint64
	last    atomic.Int64 // unix nanoseconds of the last pass that held the lock
}

// New returns a job over store; nothing happens until Run or Pass is called.
func New(store Store, log *slog.Logger, opts Options) *Job {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Rollups <= 0 {
		opts.Rollups = DefaultRollupRetention
	}
	if opts.Batch <= 0 || opts.Batch > MaxBatch {
		opts.Batch = MaxBatch
	}
	if opts.PrefixDrop == nil {
		opts.PrefixDrop = func() int { return 4 }
	}
	j := &Job{store: store, log: log, opts: opts, Now: time.Now, targets: store.LifecycleTargets(),
		purged: map[string]*atomic.Uint64{}, dropped: map[string]*atomic.Uint64{}, behind: map[string]time.Duration{}}
	for _, t := range j.targets {
		j.purged[t.Name], j.dropped[t.Name] = &atomic.Uint64{}, &atomic.Uint64{}
	}
	return j
}

// Targets names the tables the job purges, in order.
func (j *Job) Targets() []string {
	out := make([]string, len(j.targets))
	for i, t := range j.targets {
		out[i] = t.Name
	}
	return out
}

// Purged counts the rows of target this job deleted.
func (j *Job) Purged(target string) uint64 {
	if c := j.purged[target]; c != nil {
		return c.Load()
	}
	return 0
}

// DroppedDays counts the days of target this job dropped whole.
func (j *Job) DroppedDays(target string) uint64 {
	if c := j.dropped[target]; c != nil {
		return c.Load()
	}
	return 0
}

// Behind is how far the oldest row of target lay past its horizon at the last pass: zero
// when nothing older than the horizon was left.
func (j *Job) Behind(target string) time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.behind[target]
}

// RolledHours counts the hours this job counted into the rollups.
func (j *Job) RolledHours() uint64 { return j.rolled.Load() }

// LastPass is when this job last finished a pass that held the lock; zero before the first.
func (j *Job) LastPass() time.Time {
	if ns := j.last.Load(); ns != 0 {
		return time.Unix(0, ns).UTC()
	}
	return time.Time{}
}

// Run passes every Interval until ctx ends, the first one an Interval after it starts, so
// that instances started together do not all begin at once; a failed pass is retried
// sooner, backing off with jitter up to Interval.
func (j *Job) Run(ctx context.Context) error {
	backoff := time.Second
	wait := jitter(j.opts.Interval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = jitter(j.opts.Interval)
		if _, err := j.Pass(ctx); err != nil && ctx.Err() == nil {
			j.log.Warn("history retention pass failed", "err", err)
			wait = jitter(min(backoff, j.opts.Interval))
			backoff *= 2
		} else {
			backoff = time.Second
		}
	}
}

// jitter is d less up to a fifth of it, at random.
func jitter(d time.Duration) time.Duration {
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// Report says what one pass did.
type Report struct {
	// Skipped is true when another instance held the lock, and the pass did nothing.
	Skipped bool
	// Horizon is where history was cut: rows created before it are gone, or counted in the
	// rollups and going.
	Horizon time.Time
	// Rolled is how many hours were counted into the rollups.
	Rolled int
	// Purged counts the rows deleted per target, those of dropped days included.
	Purged map[string]int
	// Dropped counts the days dropped whole per target (a Partitioner's); their rows were
	// not deleted one by one.
	Dropped map[string]int
	// Prepared is how many day partitions were made ahead.
	Prepared int
}

// Pass is one pass: unless another instance holds the lifecycle lock, it rolls up every
// whole hour older than the retention, then purges each target batch by batch. Either way
// it measures how far behind each target is.
func (j *Job) Pass(ctx context.Context) (Report, error) {
	if j.opts.Retention <= 0 {
		return Report{}, errors.New("retention: no retention set")
	}
	now := j.Now()
	r := Report{Horizon: hourStart(now.Add(-j.opts.Retention)), Purged: map[string]int{}, Dropped: map[string]int{}}
	rollHorizon := hourStart(now.Add(-j.opts.Rollups))
	var prepared error
	err := j.locked(ctx, &r, func() error {
		// Days that cannot be made now (a lock not granted in time) are made by a later
		// pass; meanwhile their rows go to the default partition. The rest goes on.
		prepared = j.prepare(ctx, &r, now)
		if err := j.rollUp(ctx, &r, rollHorizon); err != nil {
			return err
		}
		for _, t := range j.targets {
			before := r.Horizon
			if t.Keep == KeepRollups {
				before = rollHorizon
			}
			if err := j.drop(ctx, &r, t.Name, before); err != nil {
				return err
			}
			if err := j.purge(ctx, &r, t.Name, before); err != nil {
				return err
			}
		}
		j.last.Store(j.Now().UnixNano())
		return nil
	})
	err = errors.Join(prepared, err)
	total := 0
	for _, n := range r.Purged {
		total += n
	}
	if total > 0 || r.Rolled > 0 {
		j.log.Info("history retention pass", "horizon", r.Horizon, "rolled_hours", r.Rolled, "purged", r.Purged,
			"purged_rows", total, "dropped_days", r.Dropped, "duration", j.Now().Sub(now).Round(time.Millisecond).String())
	}
	return r, errors.Join(err, j.measure(ctx, r.Horizon, rollHorizon))
}

// locked runs fn holding the lifecycle lock, or marks r skipped when another holds it.
func (j *Job) locked(ctx context.Context, r *Report, fn func() error) error {
	release, ok, err := j.store.TryLifecycleLock(ctx)
	if err != nil {
		return fmt.Errorf("retention: lock: %w", err)
	}
	if !ok {
		r.Skipped = true
		return nil
	}
	defer release()
	return fn()
}

// rollUp counts every hour before the horizon into the rollups, a store's portion at a time.
func (j *Job) rollUp(ctx context.Context, r *Report, from time.Time) error {
	var prev time.Time
	for {
		at, hours, err := j.store.RollUp(ctx, from, r.Horizon, j.opts.PrefixDrop())
		if err != nil {
			return fmt.Errorf("retention: roll up: %w", err)
		}
		r.Rolled += hours
		j.rolled.Add(uint64(hours))
		if !at.Before(r.Horizon) {
			return nil
		}
		if at.Equal(prev) {
			return fmt.Errorf("retention: roll up: the boundary stays at %s, short of %s", at, r.Horizon)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		prev = at
	}
}

// prepare makes the day partitions from today's to DaysAhead days after it, when the store
// has them.
func (j *Job) prepare(ctx context.Context, r *Report, now time.Time) error {
	p, ok := j.store.(Partitioner)
	if !ok {
		return nil
	}
	n, err := p.PrepareDays(ctx, now, now.Add(DaysAhead*24*time.Hour))
	r.Prepared = n
	if err != nil {
		return fmt.Errorf("retention: prepare days: %w", err)
	}
	return nil
}

// drop drops target's whole days before before, when the store has them.
func (j *Job) drop(ctx context.Context, r *Report, target string, before time.Time) error {
	p, ok := j.store.(Partitioner)
	if !ok {
		return nil
	}
	days, rows, err := p.DropDays(ctx, target, before)
	if err != nil {
		return fmt.Errorf("retention: drop days of %s: %w", target, err)
	}
	r.Dropped[target] += days
	r.Purged[target] += rows
	j.purged[target].Add(uint64(rows))
	j.dropped[target].Add(uint64(days))
	return nil
}

// purge deletes target's rows created before before, batch by batch, until a batch comes
// back short.
func (j *Job) purge(ctx context.Context, r *Report, target string, before time.Time) error {
	for {
		n, err := j.store.Purge(ctx, target, before, j.opts.Batch)
		if err != nil {
			return fmt.Errorf("retention: purge %s: %w", target, err)
		}
		r.Purged[target] += n
		j.purged[target].Add(uint64(n))
		if n < j.opts.Batch {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// measure records, per target, how far its oldest row lies past its horizon.
func (j *Job) measure(ctx context.Context, history, rollups time.Time) error {
	var errs []error
	for _, t := range j.targets {
		oldest, err := j.store.Oldest(ctx, t.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("retention: oldest %s: %w", t.Name, err))
			continue
		}
		horizon := history
		if t.Keep == KeepRollups {
			horizon = rollups
		}
		behind := time.Duration(0)
		if !oldest.IsZero() && oldest.Before(horizon) {
			behind = horizon.Sub(oldest)
		}
		j.mu.Lock()
		j.behind[t.Name] = behind
		j.mu.Unlock()
	}
	return errors.Join(errs...)
}
