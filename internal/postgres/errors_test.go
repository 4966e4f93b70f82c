package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"otpgate/internal/otp"
	"otpgate/internal/testenv"
)

// TestWrapClassifiesUnavailability checks that only real failures to reach the database
// in time become otp.ErrUnavailable (a 503), and that mistakes — ours or the statement's —
// stay internal errors (a 500 logged as an error).
func TestWrapClassifiesUnavailability(t *testing.T) {
	ctx := context.Background()
	pool, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer pool.Close()

	var n int
	scanBug := pool.QueryRow(ctx, `SELECT 'not a number'`).Scan(&n)
	_, syntax := pool.Exec(ctx, `SELEC 1`)
	_, unique := pool.Exec(ctx, `CREATE TEMP TABLE t (x int PRIMARY KEY); INSERT INTO t VALUES (1), (1)`)
	timeout, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_, deadline := pool.Exec(timeout, `SELECT 1`)
	closed, err := Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	closed.Close()
	_, closedPool := closed.Exec(ctx, `SELECT 1`)

	for _, c := range []struct {
		name string
		err  error
		want otp.Code
	}{
		{"ScanIntoTheWrongTypeIsInternal", scanBug, otp.CodeInternal},
		{"SyntaxErrorIsInternal", syntax, otp.CodeInternal},
		{"UniqueViolationIsInternal", unique, otp.CodeInternal},
		{"ProtocolViolationIsInternal", &pgconn.PgError{Code: "08P01"}, otp.CodeInternal},
		{"UnknownErrorIsInternal", errors.New("something odd"), otp.CodeInternal},
		{"DeadlineIsUnavailable", deadline, otp.CodeUnavailable},
		{"ClosedPoolIsUnavailable", closedPool, otp.CodeUnavailable},
		{"ConnectionExceptionIsUnavailable", &pgconn.PgError{Code: "08006"}, otp.CodeUnavailable},
		{"AdminShutdownIsUnavailable", &pgconn.PgError{Code: "57P01"}, otp.CodeUnavailable},
		{"TooManyConnectionsIsUnavailable", &pgconn.PgError{Code: "53300"}, otp.CodeUnavailable},
		{"NotFoundStaysNotFound", fmt.Errorf("lookup: %w", otp.ErrNotFound), otp.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("the error to classify did not happen")
			}
			if got := otp.ErrorCode(wrap("op", c.err)); got != c.want {
				t.Errorf("got %v, want %v (for %v)", got, c.want, c.err)
			}
		})
	}
}
