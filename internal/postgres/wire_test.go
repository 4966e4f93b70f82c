package postgres_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// wire counts what a pool asks of the server: statements, as pgx traces them, and round
// trips, as writes to the server's socket. pgx writes each request (a statement's bind and
// execute, or its prepare the first time) in one write and then waits for the answer, so
// every write is one round trip.
type wire struct {
	statements, trips atomic.Int64
}

func (w *wire) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	w.statements.Add(1)
	return ctx
}

func (w *wire) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// reset forgets what was counted so far.
func (w *wire) reset() {
	w.statements.Store(0)
	w.trips.Store(0)
}

// countedConn counts its writes as round trips.
type countedConn struct {
	net.Conn
	w *wire
}

func (c countedConn) Write(b []byte) (int, error) {
	c.w.trips.Add(1)
	return c.Conn.Write(b)
}

// mustOpenCounted returns a one-connection pool on a fresh, migrated database whose
// statements and round trips are counted, from zero, in the returned wire.
func mustOpenCounted(tb testing.TB) (*pgxpool.Pool, *wire) {
	tb.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN(tb))
	if err != nil {
		tb.Fatalf("ParseConfig: %v", err)
	}
	w := &wire{}
	cfg.MaxConns = 1
	cfg.ConnConfig.Tracer = w
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countedConn{Conn: c, w: w}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("NewWithConfig: %v", err)
	}
	tb.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		tb.Fatalf("Ping: %v", err)
	}
	w.reset()
	return pool, w
}
