package postgres

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"otpgate/internal/otp"
)

// SettleSends marks at most limit sends that are still sending and were begun before
// before as otp.SendUnknown, oldest first, in one statement, and returns how many it
// marked. Rows another caller holds are skipped, not waited for.
func (s *Store) SettleSends(ctx context.Context, before, now time.Time, limit int) (int, error) {
	return settleSends(ctx, s.pool, before, now, limit)
}

// execer is what pools and connections share for statements without rows.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func settleSends(ctx context.Context, db execer, before, now time.Time, limit int) (int, error) {
	// By primary key, id and created_at: sends is partitioned by day of created_at.
	tag, err := db.Exec(ctx, `UPDATE sends SET status = 'unknown', error = $3, updated_at = $2
		WHERE created_at < $1 AND (id, created_at) IN (SELECT id, created_at FROM sends WHERE status = 'sending' AND created_at < $1
			ORDER BY created_at LIMIT $4 FOR UPDATE SKIP LOCKED)`,
		before, now, otp.UnknownOutcome, limit)
	if err != nil {
		return 0, wrap("settle sends", err)
	}
	return int(tag.RowsAffected()), nil
}

// OldestSending is when the oldest send still sending was begun; zero when none is.
func (s *Store) OldestSending(ctx context.Context) (time.Time, error) {
	var t *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT min(created_at) FROM sends WHERE status = 'sending'`).Scan(&t); err != nil {
		return time.Time{}, wrap("oldest sending", err)
	}
	if t == nil {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

// SweeperOptions configure a Sweeper.
type SweeperOptions struct {
	// After is how long a send may stay sending before it is settled as unknown: longer
	// than any provider call (SMS_TIMEOUT) plus the outcome writer's delay.
	After time.Duration
	// Interval is the pause between passes; each is jittered by up to a fifth.
	Interval time.Duration
	// BatchSize is the most rows one statement settles (default 500).
	BatchSize int
}

// sweepLockID names the advisory lock that lets one instance at a time sweep.
const sweepLockID int64 = 0x6f7470_7377 // "otp" "sw"

// Sweeper settles the sends that servers which stopped (crashed, killed) left sending:
// after SweeperOptions.After their outcome will never be written, so they become unknown.
// It runs on every instance; a pass holds a Postgres advisory lock, so one instance at a
// time sweeps, in short statements of BatchSize rows.
type Sweeper struct {
	store *Store
	log   *slog.Logger
	opts  SweeperOptions

	settled atomic.Uint64
	lagNs   atomic.Int64
}

// NewSweeper returns a sweeper over store; nothing is swept until Run or Sweep is called.
func NewSweeper(store *Store, log *slog.Logger, opts SweeperOptions) *Sweeper {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	return &Sweeper{store: store, log: log, opts: opts}
}

// Settled counts the sends this sweeper settled as unknown.
func (w *Sweeper) Settled() uint64 { return w.settled.Load() }

// Lag is how long the oldest send still sending had been at the last pass: how far behind
// the outcomes are. It exceeds After only while a pass is due or failing.
func (w *Sweeper) Lag() time.Duration { return time.Duration(w.lagNs.Load()) }

// Run sweeps every Interval until ctx ends; a failed pass is retried sooner, backing off
// with jitter up to Interval.
func (w *Sweeper) Run(ctx context.Context) error {
	return repeat(ctx, w.opts.Interval, w.log, "sweeping sends left sending failed", func(ctx context.Context) error {
		_, err := w.Sweep(ctx)
		return err
	})
}

// repeat runs pass at once, then every interval until ctx ends. A failed pass is logged with
// msg and retried sooner, backing off from a second, doubling, up to interval.
func repeat(ctx context.Context, interval time.Duration, log *slog.Logger, msg string, pass func(context.Context) error) error {
	backoff := time.Second
	for {
		wait := jitter(interval)
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			log.Warn(msg, "err", err)
			wait = jitter(min(backoff, interval))
			backoff *= 2
		} else {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// jitter is d less up to a fifth of it, at random, so instances do not sweep in step.
func jitter(d time.Duration) time.Duration {
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// Sweep is one pass: unless another instance holds the sweep lock, it settles every send
// sending for longer than After, batch by batch, and returns how many it settled. Either
// way it records the lag.
func (w *Sweeper) Sweep(ctx context.Context) (int, error) {
	now := w.store.Now()
	total, err := w.settle(ctx, now)
	if errors.Is(err, errLockHeld) {
		err = nil
	}
	oldest, lerr := w.store.OldestSending(ctx)
	switch {
	case lerr != nil:
		err = errors.Join(err, lerr)
	case oldest.IsZero():
		w.lagNs.Store(0)
	default:
		w.lagNs.Store(int64(max(w.store.Now().Sub(oldest), 0)))
	}
	return total, err
}

// errLockHeld means another instance is sweeping.
var errLockHeld = errors.New("sweep lock held elsewhere")

// settle takes the sweep lock on a connection of its own and settles batches until one
// comes back short, then lets the lock go.
func (w *Sweeper) settle(ctx context.Context, now time.Time) (int, error) {
	conn, release, locked, err := w.store.tryAdvisoryLock(ctx, sweepLockID, "sweep lock")
	if err != nil {
		return 0, err
	}
	if !locked {
		return 0, errLockHeld
	}
	defer release()
	before := now.Add(-w.opts.After)
	total := 0
	for {
		n, err := settleSends(ctx, conn, before, now, w.opts.BatchSize)
		if err != nil {
			return total, err
		}
		total += n
		w.settled.Add(uint64(n))
		if n > 0 {
			w.log.Warn("sends left sending settled as unknown", "rows", n, "older_than", w.opts.After.String())
		}
		if n < w.opts.BatchSize {
			return total, nil
		}
	}
}
