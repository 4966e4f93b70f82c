package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/postgres"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/stores"
	"otpgate/internal/testenv"
)

// seedOld copies, from start, n verifications one every step, each with a sent send and a
// check a few seconds later (every other one approved, the rest wrong codes), a resend for
// every other one, and a blocked send per pair: 4n rows under ten phone prefixes.
func seedOld(tb testing.TB, pool *pgxpool.Pool, start time.Time, step time.Duration, n int) {
	tb.Helper()
	var vs, ss, as [][]any
	for i := range n {
		at := start.Add(time.Duration(i) * step)
		id := testenv.UUIDAt(at)
		phone := fmt.Sprintf("+8190%d%07d", i%10, i)
		// The prefix the store keeps beside the address, which the rollups count by.
		prefix := phone[:len(phone)-postgres.PrefixKeep]
		vs = append(vs, []any{id, phone, prefix, "sms", "en", "approved", 1, 0, 5, "192.0.2.1", at, at.Add(5 * time.Minute), at.Add(time.Minute)})
		ss = append(ss, []any{testenv.UUIDAt(at), id, phone, prefix, "192.0.2.1", "sent", "", "test", at, at})
		outcome := "approved"
		if i%2 == 1 {
			outcome = "invalid_code"
			ss = append(ss, []any{testenv.UUIDAt(at.Add(time.Second)), id, phone, prefix, "192.0.2.1", "sent", "", "test", at.Add(time.Second), at.Add(time.Second)})
		} else {
			ss = append(ss, []any{testenv.UUIDAt(at.Add(2 * time.Second)), nil, phone, prefix, "192.0.2.9", "blocked", "phone 1/1m", "", at.Add(2 * time.Second), at.Add(2 * time.Second)})
		}
		as = append(as, []any{id, outcome, "198.51.100.7", at.Add(3 * time.Second)})
	}
	ctx := context.Background()
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"verifications", []string{"id", "phone", "phone_prefix", "channel", "locale", "status", "sends", "attempts", "max_attempts", "client_ip", "created_at", "expires_at", "closed_at"}, vs},
		{"sends", []string{"id", "verification_id", "phone", "phone_prefix", "client_ip", "status", "reason", "provider", "created_at", "updated_at"}, ss},
		{"attempts", []string{"verification_id", "outcome", "client_ip", "created_at"}, as},
	} {
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			tb.Fatalf("seed %s: %v", c.table, err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE verifications, sends, attempts`); err != nil {
		tb.Fatalf("analyze: %v", err)
	}
}

// rows answers a query's rows as text, in order, for comparing whole tables.
func rows(t *testing.T, pool *pgxpool.Pool, q string, args ...any) []string {
	t.Helper()
	rs, _ := pool.Query(t.Context(), q, args...)
	out, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) (string, error) {
		v, err := r.Values()
		if len(v) == 1 {
			return fmt.Sprint(v[0]), err
		}
		return fmt.Sprint(v), err
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func TestRollUp(t *testing.T) {
	t.Run("CountingHoursAgainGivesTheSameRollups", func(t *testing.T) {
		t.Parallel()
		pool := stores.OpenPostgres(t)
		s := postgres.New(pool, testenv.DataKeys())
		start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		seedOld(t, pool, start, 97*time.Second, 2000) // two days and a bit
		rollAll := func() {
			for at := (time.Time{}); at.Before(start.Add(48 * time.Hour)); {
				var err error
				if at, _, err = s.RollUp(t.Context(), start.Add(-time.Hour), start.Add(48*time.Hour), 4); err != nil {
					t.Fatalf("RollUp: %v", err)
				}
			}
		}
		rollAll()
		const statsQ, convQ = `SELECT * FROM stats_hourly ORDER BY 1, 2, 3, 4`, `SELECT * FROM conversion_hourly ORDER BY 1, 2`
		stats, conv := rows(t, pool, statsQ), rows(t, pool, convQ)
		if len(stats) < 48 || len(conv) < 48 {
			t.Fatalf("got %d stats and %d conversion rollups, want some for each of 48 hours", len(stats), len(conv))
		}
		// A count that something interrupted left a stray row, and the boundary goes back.
		if _, err := pool.Exec(t.Context(), `INSERT INTO stats_hourly VALUES ($1, gen_random_uuid(), 'sent', '', 7)`, start.Add(5*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(t.Context(), `UPDATE history_lifecycle SET rolled_before = NULL`); err != nil {
			t.Fatal(err)
		}
		rollAll()
		if got := rows(t, pool, statsQ); fmt.Sprint(got) != fmt.Sprint(stats) {
			t.Errorf("stats rollups counted again: got %d rows, want the same %d rows", len(got), len(stats))
		}
		if got := rows(t, pool, convQ); fmt.Sprint(got) != fmt.Sprint(conv) {
			t.Errorf("conversion rollups counted again: got %d rows, want the same %d rows", len(got), len(conv))
		}
	})
}

// exclusive is a retention.Store that counts the instances holding the lifecycle lock at
// once, and may hold a pass inside RollUp until told to go on.
type exclusive struct {
	retention.Store
	holders, most *atomic.Int32
	hold          chan chan struct{} // when set, RollUp sends a channel here and waits for it to close
}

func (x *exclusive) TryLifecycleLock(ctx context.Context) (func(), bool, error) {
	release, ok, err := x.Store.TryLifecycleLock(ctx)
	if !ok || err != nil {
		return release, ok, err
	}
	if n := x.holders.Add(1); n > x.most.Load() {
		x.most.Store(n)
	}
	return func() { x.holders.Add(-1); release() }, true, nil
}

func (x *exclusive) RollUp(ctx context.Context, from, before time.Time, drop int) (time.Time, int, error) {
	if x.hold != nil {
		wait := make(chan struct{})
		x.hold <- wait
		<-wait
	}
	return x.Store.RollUp(ctx, from, before, drop)
}

func TestLifecycleOneInstanceAtATime(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	db := stores.OpenPostgresDSN(t, dsn)
	now := time.Now().UTC()
	const n = 3000
	seedOld(t, db, now.Add(-100*24*time.Hour), 10*time.Second, n)
	var holders, most atomic.Int32
	// Two instances: their own pools on one database, each with its own job.
	jobs := make([]*retention.Job, 2)
	exclusives := make([]*exclusive, 2)
	for i := range jobs {
		pool := stores.OpenPostgresDSN(t, dsn)
		exclusives[i] = &exclusive{Store: postgres.New(pool, testenv.DataKeys()), holders: &holders, most: &most}
		jobs[i] = retention.New(exclusives[i], discard(), retention.Options{Retention: 90 * 24 * time.Hour, Batch: 250})
	}

	// While the first instance is inside its pass, the second one's pass is skipped.
	exclusives[0].hold = make(chan chan struct{})
	first := make(chan error, 1)
	go func() { _, err := jobs[0].Pass(t.Context()); first <- err }()
	wait := <-exclusives[0].hold
	exclusives[0].hold = nil
	if r, err := jobs[1].Pass(t.Context()); err != nil || !r.Skipped {
		t.Errorf("second instance while the first passes: got %+v, %v; want it skipped", r, err)
	}
	close(wait)
	if err := <-first; err != nil {
		t.Fatalf("first instance: %v", err)
	}

	// Then both, from many goroutines at once: one at a time does the work, every row is
	// deleted once, and none is left.
	seedOld(t, db, now.Add(-95*24*time.Hour), 10*time.Second, n)
	var wg sync.WaitGroup
	var skipped atomic.Int32
	for g := range 8 {
		wg.Go(func() {
			for range 5 {
				r, err := jobs[g%2].Pass(t.Context())
				if err != nil {
					t.Errorf("pass: %v", err)
					return
				}
				if r.Skipped {
					skipped.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("got %d instances holding the lock at once, want 1", most.Load())
	}
	if skipped.Load() == 0 {
		t.Errorf("no pass was skipped: the passes never met")
	}
	var purged uint64
	for _, j := range jobs {
		for _, target := range []string{"attempts", "sends", "verifications"} {
			purged += j.Purged(target)
		}
	}
	if purged != 2*4*n {
		t.Errorf("got %d rows purged by both instances together, want each of the %d old rows once", purged, 2*4*n)
	}
	for _, table := range []string{"attempts", "sends", "verifications"} {
		if left := count(t, db, `SELECT count(*) FROM `+table); left != 0 {
			t.Errorf("%s: %d rows left, want none", table, left)
		}
	}
}

// TestPurgeStatementsUseIndexes checks the plans of the purge statements over a history of
// 80,000 rows: each batch reads what it deletes through indexes, never a whole table — the
// verifications' statement also after sends and attempts are purged, while the statistics
// still count them.
func TestPurgeStatementsUseIndexes(t *testing.T) {
	t.Parallel()
	db := stores.OpenPostgres(t)
	s := postgres.New(db, testenv.DataKeys())
	now := time.Now().UTC()
	seedOld(t, db, now.Add(-100*24*time.Hour), 15*time.Second, 20000)
	seedOld(t, db, now.Add(-48*time.Hour), time.Minute, 500)
	horizon := now.Add(-90 * 24 * time.Hour).Truncate(time.Hour)
	for at := (time.Time{}); at.Before(horizon); {
		var err error
		if at, _, err = s.RollUp(t.Context(), now.Add(-400*24*time.Hour), horizon, 4); err != nil {
			t.Fatalf("RollUp: %v", err)
		}
	}
	plan := func(target string) string {
		q, args := postgres.PurgeStatement(target, horizon, retention.MaxBatch)
		return strings.Join(rows(t, db, "EXPLAIN "+q, args), "\n")
	}
	wantIndexed := func(target, p string) {
		t.Helper()
		// The day partitions around now are empty here (the seeded history is older than
		// the days the migration made): reading an empty table whole costs nothing.
		p = emptyDayScan.ReplaceAllString(p, "Empty Day Scan on ")
		for _, table := range []string{"verifications", "sends", "attempts"} {
			if strings.Contains(p, "Seq Scan on "+table) {
				t.Errorf("%s: the plan reads %s whole:\n%s", target, table, p)
			}
		}
	}
	for _, target := range []string{"attempts", "sends", "verifications"} {
		wantIndexed(target, plan(target))
	}
	for _, target := range []string{"attempts", "sends"} {
		for {
			n, err := s.Purge(t.Context(), target, horizon, retention.MaxBatch)
			if err != nil {
				t.Fatalf("Purge(%s): %v", target, err)
			}
			if n < retention.MaxBatch {
				break
			}
		}
	}
	wantIndexed("verifications after the others", plan("verifications"))
}

// emptyDayScan is a whole read of a day partition of sends or attempts.
var emptyDayScan = regexp.MustCompile(`Seq Scan on (?:sends|attempts)_p\d{8} `)
