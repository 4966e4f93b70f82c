package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/testenv/fixture"
)

const localPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresDSN creates an empty database on the shared PostgreSQL for this test and returns its
// postgres:// URL; the database is dropped at cleanup, even with connections left open.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	admin := PostgresURL(tb)
	name := "otpgate_t_" + randomHex(tb, 6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, drop, err := fixture.CreateDatabase(ctx, admin, name)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := drop(ctx); err != nil {
			tb.Errorf("testenv: %v", err)
		}
	})
	return dsn
}

// PostgresURL returns the postgres:// URL of a role on the shared PostgreSQL that may create
// databases, for a program under test that makes its own (cmd/loadgen); a test that wants a
// database takes PostgresDSN.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	NeedsService(tb, "PostgreSQL")
	admin, err := shared.postgres.get(findPostgres)
	if err != nil {
		unavailable(tb, "PostgreSQL", err, "postgresql")
	}
	return admin
}

// adminURL is DATABASE_URL as the tests use it: without pgxpool's pool_* parameters, which
// the tests' single connections refuse, and without TLS unless it asks for it.
func adminURL(dsn string) (string, error) {
	single, err := fixture.SingleConnURL(dsn)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(single)
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", errors.New("DATABASE_URL must be a postgres:// URL")
	}
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// pingPostgres checks quickly that a PostgreSQL accepts the dsn.
func pingPostgres(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// findPostgres picks DATABASE_URL, then the local port, then a throw-away server.
func findPostgres() (string, error) {
	var tried []error
	try := func(dsn string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return pingPostgres(ctx, dsn)
	}
	if u := os.Getenv("DATABASE_URL"); u != "" {
		u, err := adminURL(u)
		if err == nil {
			if err = try(u); err == nil {
				return u, nil
			}
		}
		tried = append(tried, fmt.Errorf("DATABASE_URL does not answer: %w", err))
	}
	if os.Getenv("OTPGATE_TESTENV_NO_LOCAL") == "" {
		err := try(localPostgresURL)
		if err == nil {
			return localPostgresURL, nil
		}
		tried = append(tried, fmt.Errorf("nothing on 127.0.0.1:5432: %w", err))
	}
	s, err := startSharedPostgres()
	if err != nil {
		return "", errors.Join(append(tried, err)...)
	}
	return s.DSN("postgres"), nil
}

// startSharedPostgres starts the throw-away PostgreSQL that lives until Main stops it.
func startSharedPostgres() (*PostgresServer, error) {
	s, err := newPostgresServer()
	if err != nil {
		return nil, err
	}
	if err := atExit(s.remove); err != nil {
		s.remove()
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, fmt.Errorf("throw-away postgres: %w", err)
	}
	return s, nil
}
