package testenv_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/testenv"
)

func TestPostgresDSN(t *testing.T) {
	ctx := context.Background()

	t.Run("DistinctEmptyDatabases", func(t *testing.T) {
		a, b := testenv.PostgresDSN(t), testenv.PostgresDSN(t)
		if a == b {
			t.Fatalf("got %q twice, want two databases", a)
		}
		ca := connect(t, a)
		if _, err := ca.Exec(ctx, "CREATE TABLE only_in_a (id int)"); err != nil {
			t.Fatal(err)
		}
		cb := connect(t, b)
		var n int
		err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("got %d tables in a fresh database, want 0", n)
		}
	})

	t.Run("DroppedAtCleanupDespiteOpenConnection", func(t *testing.T) {
		var name string
		t.Run("Inner", func(t *testing.T) {
			c := connect(t, testenv.PostgresDSN(t))
			if err := c.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
				t.Fatal(err)
			}
			// the connection is left open on purpose
		})
		var exists bool
		admin := connect(t, testenv.PostgresDSN(t))
		err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
		if err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("got database %s still present after cleanup, want dropped", name)
		}
	})
}

// connect opens a connection closed at cleanup.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
