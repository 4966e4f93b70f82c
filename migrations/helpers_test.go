package migrations

import (
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"otpgate/internal/testenv"
)

// migratedTo opens a fresh database migrated up to version, for a test of the migrations
// after it, with the provider that goes on and a statement runner that fails the test.
func migratedTo(t *testing.T, version int64) (*sql.DB, *goose.Provider, func(q string, args ...any)) {
	t.Helper()
	db, err := sql.Open("pgx", testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := provider(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), version); err != nil {
		t.Fatalf("up to %d: %v", version, err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db, p, exec
}
