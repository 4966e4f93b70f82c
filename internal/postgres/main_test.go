package postgres_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/postgres"
	"otpgate/internal/storetest"
	"otpgate/internal/storetest/fixture"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// mustOpen returns a pool on a fresh, migrated database, closed at cleanup.
func mustOpen(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return mustOpenDSN(tb, testenv.PostgresDSN(tb))
}

func mustOpenDSN(tb testing.TB, dsn string) *pgxpool.Pool {
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

// startWriter runs a batch writer until cleanup.
func startWriter(tb testing.TB, pool *pgxpool.Pool, log *slog.Logger, opts postgres.BatchOptions) *postgres.BatchWriter {
	tb.Helper()
	w := postgres.NewBatchWriter(pool, testenv.DataKeys(), log, opts)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	tb.Cleanup(func() {
		if err := w.Close(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	return w
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startOutcomes runs an outcome writer until cleanup.
func startOutcomes(tb testing.TB, pool *pgxpool.Pool, opts postgres.BatchOptions) *postgres.OutcomeWriter {
	tb.Helper()
	w := postgres.NewOutcomeWriter(pool, discard(), opts)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	tb.Cleanup(func() {
		if err := w.Close(context.Background()); err != nil {
			tb.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	return w
}

// TestStore runs the behaviour suite on the store as the server runs it: outcomes written
// in batches by an outcome writer, refused sends by the batch writer. Production needs every
// capability, so it runs every case.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		pool := mustOpen(t)
		s := postgres.New(pool, testenv.DataKeys())
		s.Outcomes = startOutcomes(t, pool, postgres.BatchOptions{})
		w := startWriter(t, pool, discard(), postgres.BatchOptions{})
		st := storetest.Subject{
			Store: s, Denied: w,
			Flush: func(ctx context.Context) error {
				return errors.Join(s.Outcomes.Flush(ctx), w.Flush(ctx))
			},
			SetClock: func(now func() time.Time) { s.Now = now },
		}
		if missing := fixture.Missing(st); len(missing) > 0 {
			t.Fatalf("the production store lacks %v: it must run every case of the suite", missing)
		}
		return st
	})
}
