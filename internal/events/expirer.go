package events

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// expireBatch is how many verifications or blocks one statement of the Expirer closes.
const expireBatch = 500

// Expirer is the periodic job for the changes no request makes: it closes verifications
// whose time ran out as expired and reports fraud blocks that ran out, each with its event
// in the same step. Every instance may run it: rows are claimed with SKIP LOCKED.
type Expirer struct {
	store    Store
	log      *slog.Logger
	interval time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time

	expired atomic.Uint64
	ended   atomic.Uint64
}

// NewExpirer returns a job that runs every interval (default 15s).
func NewExpirer(store Store, log *slog.Logger, interval time.Duration) *Expirer {
	if interval <= 0 {
		interval = 15 * time.Second
	}
	return &Expirer{store: store, log: log, interval: interval, Now: func() time.Time { return time.Now().UTC() }}
}

// Expired counts verifications this instance closed as expired.
func (e *Expirer) Expired() uint64 { return e.expired.Load() }

// Ended counts fraud blocks this instance reported as ended.
func (e *Expirer) Ended() uint64 { return e.ended.Load() }

// Run passes every interval (with jitter) until ctx ends; a failed pass is logged and the
// next one comes sooner, with backoff.
func (e *Expirer) Run(ctx context.Context) error {
	failures := 0
	for {
		wait := jitter(e.interval)
		if err := e.Pass(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			failures++
			wait = jitter(min(time.Second<<min(failures, 5), e.interval))
			e.log.Warn("event expiry pass failed", "err", err, "retry_in", wait)
		} else {
			failures = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Pass closes everything that ran out by now, a batch at a time.
func (e *Expirer) Pass(ctx context.Context) error {
	now := e.Now()
	for {
		n, err := e.store.ExpireVerifications(ctx, now, expireBatch)
		e.expired.Add(uint64(n))
		if err != nil {
			return err
		}
		if n < expireBatch {
			break
		}
	}
	for {
		n, err := e.store.EndFraudBlocks(ctx, now, expireBatch)
		e.ended.Add(uint64(n))
		if err != nil {
			return err
		}
		if n < expireBatch {
			return nil
		}
	}
}
