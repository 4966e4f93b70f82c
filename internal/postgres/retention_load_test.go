package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// maxWait is the longest a write may wait for a lock while history is purged.
const maxWait = 100 * time.Millisecond

// batches is a retention.Store that records the size and duration of each purge statement.
type batches struct {
	retention.Store
	mu    sync.Mutex
	sizes []int
	took  []time.Duration
}

func (b *batches) Purge(ctx context.Context, target string, before time.Time, limit int) (int, error) {
	start := time.Now()
	n, err := b.Store.Purge(ctx, target, before, limit)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes, b.took = append(b.sizes, n), append(b.took, time.Since(start))
	return n, err
}

// probe is what the writes made meanwhile saw.
type probe struct {
	mu        sync.Mutex
	latencies []time.Duration
	errs      []error
}

func (p *probe) time(op string, fn func() error) {
	start := time.Now()
	err := fn()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latencies = append(p.latencies, time.Since(start))
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", op, err))
	}
}

// lockTimedOut reports whether err is a statement giving up on a lock (lock_timeout).
func lockTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// TestPurgeOf200kRowsKeepsWritesFlowing purges 200,000 rows past retention while sends,
// their outcomes, checks and refused sends are written, and bounds how long any of those
// writes waits for a lock at maxWait.
//
// What is bounded is the lock wait, not the latency: on a small machine shared with other
// tests, a write's latency is mostly its turn on the CPU, which says nothing about the
// purge, while a purge with long locks shows as waits, and only as waits. Every write runs
// with lock_timeout = maxWait, so one that would wait longer fails (and fails the test) —
// the check at the start shows it does; a sampler reads pg_locks meanwhile for the longest
// wait it sees. Latencies are logged for the record.
func TestPurgeOf200kRowsKeepsWritesFlowing(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	db := stores.OpenPostgresDSN(t, dsn)
	now := time.Now().UTC()
	seedOld(t, db, now.Add(-100*24*time.Hour), 15*time.Second, 50000) // 200,000 rows over 9 days
	seedOld(t, db, now.Add(-48*time.Hour), time.Minute, 500)          // 2,000 rows that stay
	before := statsAndConversion(t, postgres.New(db, testenv.DataKeys()), now)

	// The writers: a pool of their own whose sessions give up on any lock after maxWait.
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = fmt.Sprint(maxWait.Milliseconds())
	cfg.MaxConns = 8
	wpool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wpool.Close)
	writes := postgres.New(wpool, testenv.DataKeys())
	denials := stores.StartWriter(t, wpool, discard(), postgres.BatchOptions{})

	t.Run("AWriteThatWaitsLongerFails", func(t *testing.T) {
		tx, err := db.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(t.Context(), `LOCK TABLE sends IN SHARE MODE`); err != nil {
			t.Fatal(err)
		}
		if _, err := writes.BeginSend(t.Context(), sendAt(now, 0)); !lockTimedOut(err) {
			t.Fatalf("a send behind a table lock: got %v, want a lock timeout", err)
		}
	})

	var p probe
	var waited atomic.Int64 // the longest lock wait the sampler saw, in nanoseconds
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { sampleLockWaits(ctx, db, &waited) })
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				at := time.Now().UTC()
				s := sendAt(at, w*1_000_000+i)
				var v otp.Verification
				p.time("send", func() error {
					st, err := writes.BeginSend(context.Background(), s)
					v = st.Verification
					return err
				})
				p.time("outcome", func() error {
					return writes.FinishSend(context.Background(), otp.FinishSend{SendID: s.SendID, Status: otp.SendSent, Now: at})
				})
				p.time("check", func() error {
					_, _, err := writes.Check(context.Background(), otp.CheckRef{ID: v.ID, ClientIP: "198.51.100.7", Now: at},
						func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
							v.Status, v.ClosedAt = otp.StatusApproved, at
							return v, otp.OutcomeApproved
						})
					return err
				})
				denials.RecordDenied(otp.DeniedSend{ID: uuid.Must(uuid.NewV7()).String(), Phone: s.Phone, ClientIP: "192.0.2.9",
					Status: otp.SendBlocked, Reason: "phone 1/1m", Time: at})
			}
		})
	}

	counted := &batches{Store: postgres.New(db, testenv.DataKeys())}
	job := retention.New(counted, discard(), retention.Options{Retention: 90 * 24 * time.Hour})
	start := time.Now()
	r, err := job.Pass(t.Context())
	took := time.Since(start)
	stop()
	wg.Wait()
	if err := denials.Flush(t.Context()); err != nil {
		t.Fatalf("flush refused sends: %v", err)
	}

	purged := r.Purged["attempts"] + r.Purged["sends"] + r.Purged["verifications"]
	if err != nil || r.Skipped || purged != 200_000 {
		t.Fatalf("pass: got %+v, %v; want 200,000 rows purged", r, err)
	}
	if most := slices.Max(counted.sizes); most > retention.MaxBatch {
		t.Errorf("got a statement deleting %d rows, want at most %d", most, retention.MaxBatch)
	}
	for _, e := range p.errs {
		if lockTimedOut(e) {
			t.Errorf("a write waited longer than %v for a lock: %v", maxWait, e)
		} else {
			t.Errorf("a write failed: %v", e)
		}
	}
	if w := time.Duration(waited.Load()); w > maxWait {
		t.Errorf("the longest lock wait seen was %v, want at most %v", w, maxWait)
	}
	if len(p.latencies) < 30 {
		t.Errorf("only %d writes ran during the purge; want enough to have met it", len(p.latencies))
	}
	if d := denials.Dropped(); d != 0 {
		t.Errorf("%d refused sends were not written", d)
	}
	for table, want := range map[string]int{"verifications": 500, "sends": 1000, "attempts": 500} {
		if got := count(t, db, `SELECT count(*) FROM `+table+` WHERE created_at < now() - interval '3 days'`); got != 0 {
			t.Errorf("%s: %d rows past retention left, want none", table, got)
		}
		if got := count(t, db, `SELECT count(*) FROM `+table+` WHERE created_at BETWEEN now() - interval '3 days' AND now() - interval '1 day'`); got != want {
			t.Errorf("%s: %d rows within retention, want the %d seeded", table, got, want)
		}
	}
	wantSame(t, before, statsAndConversion(t, postgres.New(db, testenv.DataKeys()), now))

	slices.Sort(p.latencies)
	t.Logf("purged %d rows (%v) in %v: %.0f rows/s, %d statements, the longest %v; meanwhile %d writes, latency p50 %v p99 %v max %v; longest lock wait seen %v",
		purged, r.Purged, took.Round(time.Millisecond), float64(purged)/took.Seconds(), len(counted.sizes), slices.Max(counted.took).Round(time.Millisecond),
		len(p.latencies), p.latencies[len(p.latencies)/2].Round(time.Microsecond), p.latencies[len(p.latencies)*99/100].Round(time.Microsecond),
		p.latencies[len(p.latencies)-1].Round(time.Microsecond), time.Duration(waited.Load()).Round(time.Microsecond))
}

// sendAt is a send to a phone of its own at at.
func sendAt(at time.Time, i int) otp.BeginSend {
	return otp.BeginSend{
		Phone: fmt.Sprintf("+8170%08d", i), Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
		Now: at, TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(),
		CodeHash: func(string) []byte { return []byte("h") },
	}
}

// sampleLockWaits keeps in most the longest that any session of the database has been
// waiting for a lock, sampling every few milliseconds until ctx ends.
func sampleLockWaits(ctx context.Context, db *pgxpool.Pool, most *atomic.Int64) {
	for ctx.Err() == nil {
		var w time.Duration
		err := db.QueryRow(ctx, `SELECT coalesce(max(clock_timestamp() - waitstart), '0') FROM pg_locks
			WHERE NOT granted AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())`).Scan(&w)
		if err == nil && int64(w) > most.Load() {
			most.Store(int64(w))
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// figures are what the charts and the conversion figures said of the seeded days.
type figures struct {
	stats      []history.StatBucket
	conversion string
}

// statsAndConversion reads the day charts and the conversion figures from 101 days before
// now, and keeps what the test's writes do not change: the days up to three days ago, the
// seeded numbers.
func statsAndConversion(t *testing.T, s *postgres.Store, now time.Time) figures {
	t.Helper()
	since := now.Add(-101 * 24 * time.Hour).Truncate(time.Hour)
	b, err := s.Stats(t.Context(), since, 24*time.Hour, "")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	c, err := s.FraudConversion(t.Context(), since, 4)
	if err != nil {
		t.Fatalf("FraudConversion: %v", err)
	}
	// The writes go to +8170…; the seeded numbers are +8190….
	c = slices.DeleteFunc(c, func(p fraud.PrefixCount) bool { return strings.HasPrefix(p.Prefix, "+8170") })
	b = slices.DeleteFunc(b, func(b history.StatBucket) bool { return !b.Start.Before(now.Add(-72 * time.Hour)) })
	return figures{stats: b, conversion: fmt.Sprint(c)}
}

func wantSame(t *testing.T, before, after figures) {
	t.Helper()
	if fmt.Sprint(after.stats) != fmt.Sprint(before.stats) {
		t.Errorf("day charts changed across the purge:\n got %v\nwant %v", after.stats, before.stats)
	}
	if after.conversion != before.conversion {
		t.Errorf("conversion figures changed across the purge:\n got %s\nwant %s", after.conversion, before.conversion)
	}
}
