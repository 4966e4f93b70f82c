// Package stores opens both stores for a store contract, fresh and empty for each case:
// PostgreSQL on a throw-away database, as the server runs it (outcomes and refused sends
// through their batch writers), and the in-memory store of dev mode. Every contract runs
// from the package that owns it, `func TestContract(t *testing.T) { stores.Each(t, run) }`,
// so a persisted feature's contract is a test file of the feature and nothing else names it.
package stores

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/inmem"
	"otpgate/internal/postgres"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/testenv"
)

// Contract is a store contract: open is called once per case for a fresh, empty store.
type Contract func(t *testing.T, open func(t *testing.T) fixture.Subject)

// Each runs run over PostgreSQL and over the in-memory store, each in a subtest named
// for it. The cases of a capability the in-memory store lacks are skipped, each naming it;
// PostgreSQL, which production runs, must have every one.
func Each(t *testing.T, run Contract) {
	t.Run("postgres", func(t *testing.T) { run(t, Postgres) })
	t.Run("inmem", func(t *testing.T) { run(t, Inmem) })
}

// Postgres is a PostgreSQL store on a fresh, migrated database, with its outcome and
// batch writers running until cleanup.
func Postgres(t *testing.T) fixture.Subject {
	t.Helper()
	pool := OpenPostgres(t)
	s := postgres.New(pool, testenv.DataKeys())
	s.Outcomes = StartOutcomes(t, pool, postgres.BatchOptions{})
	w := StartWriter(t, pool, slog.New(slog.DiscardHandler), postgres.BatchOptions{})
	st := fixture.Subject{
		Store: s, Denied: w,
		Flush: func(ctx context.Context) error {
			return errors.Join(s.Outcomes.Flush(ctx), w.Flush(ctx))
		},
		SetClock: func(now func() time.Time) { s.Now = now },
	}
	if missing := fixture.Missing(st); len(missing) > 0 {
		t.Fatalf("the production store lacks %v: it must run every case of a contract", missing)
	}
	return st
}

// Inmem is a fresh in-memory store, which records its refused sends itself.
func Inmem(t *testing.T) fixture.Subject {
	s := inmem.New()
	return fixture.Subject{
		Store: s, Denied: s,
		Flush:    func(context.Context) error { return nil },
		SetClock: func(now func() time.Time) { s.Now = now },
	}
}

// OpenPostgres is a pool on a fresh, migrated database, closed at cleanup.
func OpenPostgres(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return OpenPostgresDSN(tb, testenv.PostgresDSN(tb))
}

// OpenPostgresDSN is a pool on the database at dsn, migrated, closed at cleanup.
func OpenPostgresDSN(tb testing.TB, dsn string) *pgxpool.Pool {
	tb.Helper()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, dsn)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return pool
}

// StartWriter runs a batch writer of refused sends and attempts until cleanup.
func StartWriter(tb testing.TB, pool *pgxpool.Pool, log *slog.Logger, opts postgres.BatchOptions) *postgres.BatchWriter {
	tb.Helper()
	w := postgres.NewBatchWriter(pool, testenv.DataKeys(), log, opts)
	runUntilCleanup(tb, w.Run, w.Close)
	return w
}

// StartOutcomes runs an outcome writer until cleanup.
func StartOutcomes(tb testing.TB, pool *pgxpool.Pool, opts postgres.BatchOptions) *postgres.OutcomeWriter {
	tb.Helper()
	w := postgres.NewOutcomeWriter(pool, slog.New(slog.DiscardHandler), opts)
	runUntilCleanup(tb, w.Run, w.Close)
	return w
}

// runUntilCleanup runs a writer's loop, and at cleanup closes it and fails the test if
// either its close or its loop failed.
func runUntilCleanup(tb testing.TB, run, closeW func(context.Context) error) {
	done := make(chan error, 1)
	go func() { done <- run(context.Background()) }()
	tb.Cleanup(func() {
		if err := closeW(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
}
