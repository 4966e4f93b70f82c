package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"otpgate/internal/testenv"
	"otpgate/migrations"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestUp(t *testing.T) {
	t.Run("ThreeInstancesStartingTogetherApplyEachMigrationOnce", func(t *testing.T) {
		t.Parallel()
		dsn := testenv.PostgresDSN(t)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range errs {
			db := open(t, dsn) // each instance has its own connections
			wg.Go(func() { errs[i] = migrations.Up(t.Context(), db) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		}
		db := open(t, dsn)
		var applied, distinct int
		if err := db.QueryRow(`SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`).Scan(&applied, &distinct); err != nil {
			t.Fatalf("count versions: %v", err)
		}
		status, err := migrations.Status(t.Context(), db)
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		if applied != len(status) || distinct != len(status) {
			t.Errorf("got %d applications of %d versions, want each of the %d migrations once", applied, distinct, len(status))
		}
		for _, s := range status {
			if s.State != goose.StateApplied {
				t.Errorf("%s: got %s, want applied", s.Source.Path, s.State)
			}
		}
	})

	t.Run("SecondUpChangesNothing", func(t *testing.T) {
		t.Parallel()
		db := open(t, testenv.PostgresDSN(t))
		for i := range 2 {
			if err := migrations.Up(t.Context(), db); err != nil {
				t.Fatalf("Up %d: %v", i+1, err)
			}
		}
	})

	t.Run("SchemaRefusesInconsistentRows", func(t *testing.T) {
		t.Parallel()
		db := open(t, testenv.PostgresDSN(t))
		if err := migrations.Up(t.Context(), db); err != nil {
			t.Fatalf("Up: %v", err)
		}
		insertV := `INSERT INTO verifications (id, phone, channel, locale, status, max_attempts, created_at, expires_at, closed_at)
			VALUES (gen_random_uuid(), $1, 'sms', 'en', $2, 5, now(), now(), $3)`
		mustExec(t, db, insertV, "+819012345678", "pending", nil)
		cases := []struct {
			name, query, code string
			args              []any
		}{
			{"SecondPendingForOnePhone", insertV, "23505", []any{"+819012345678", "pending", nil}},
			{"UnknownVerificationStatus", insertV, "23514", []any{"+819087654321", "done", nil}},
			{"ClosedWithoutClosedAt", insertV, "23514", []any{"+819087654321", "approved", nil}},
			{"UnknownSendStatus", `INSERT INTO sends (id, phone, status, created_at, updated_at) VALUES (gen_random_uuid(), '+819012345678', 'delivered', now(), now())`, "23514", nil},
			{"AttemptOfNoVerification", `INSERT INTO attempts (verification_id, outcome, created_at) VALUES (gen_random_uuid(), 'approved', now())`, "23503", nil},
		}
		for _, c := range cases {
			_, err := db.ExecContext(t.Context(), c.query, c.args...)
			if code := sqlState(err); code != c.code {
				t.Errorf("%s: got %v (SQLSTATE %q), want SQLSTATE %s", c.name, err, code, c.code)
			}
		}
		mustExec(t, db, insertV, "+819012345678", "approved", "2030-01-01T00:00:00Z") // closed ones do not count
	})
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("exec: %v", err)
	}
}

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
