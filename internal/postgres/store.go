// Package postgres keeps verifications, sends and check attempts in PostgreSQL
// through pgxpool: the production otp.Store, history.Store and otp.DeniedRecorder.
package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"otpgate/internal/otp"
	"otpgate/internal/persistence"
	"otpgate/internal/pii"
	"otpgate/internal/psd2"
	"otpgate/migrations"
)

// Store implements otp.Store and history.Store over a pgx pool.
type Store struct {
	pool *pgxpool.Pool
	// keys seal the phone numbers and email addresses the rows hold and index them: a
	// row keeps an address's keyed index (what lookups and unique indexes compare) and its
	// sealed form (what reads open), never the address itself (docs/privacy.md).
	keys *pii.Keys

	// Now is the clock that tells history which pending verifications have expired
	// and where the stats range ends; tests replace it.
	Now func() time.Time
	// Outcomes, when set, takes the outcomes FinishSend records without Undo and writes
	// them in batches; nil writes each at once.
	Outcomes *OutcomeWriter
}

// Store is every feature's store; a feature whose methods it lacks fails the build here.
var _ persistence.Store = (*Store)(nil)

// New returns a store over pool that seals and indexes addresses with keys; the caller
// closes the pool.
func New(pool *pgxpool.Pool, keys *pii.Keys) *Store {
	return &Store{pool: pool, keys: keys, Now: func() time.Time { return time.Now().UTC() }}
}

// DefaultMaxConns is the pool size when the DSN has no pool_max_conns. pgxpool's own
// default (the CPU count, at least 4) queues a busy server's sends behind a handful of
// connections; three instances at 20 stay within Postgres's default 100.
const DefaultMaxConns = 20

// cancelGrace is how long a statement whose context ended may take to confirm its cancel
// before its connection is closed.
const cancelGrace = 250 * time.Millisecond

// Open connects a pool to dsn and pings it. Without a connect_timeout in dsn,
// connecting gives up after five seconds, so a dead server fails fast.
func Open(ctx context.Context, dsn string, opts ...OpenOption) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err)
	}
	for _, o := range opts {
		o(cfg.ConnConfig)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	// A call whose context ends asks the server to cancel its statement, rather than only
	// dropping the connection: a statement that runs in autocommit (a send's row, a check's
	// outcome) would otherwise carry on and commit after the caller was told it failed, such
	// as when it waited for a row lock. The connection is given cancelGrace to hear back.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap("open", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, wrap("ping", err)
	}
	return pool, nil
}

// Migrate applies the schema in migrations/ over connections of its own with the
// pool's settings, so the advisory lock dies with them if anything goes wrong.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDB(*pool.Config().ConnConfig)
	defer db.Close()
	if err := migrations.Up(ctx, db); err != nil {
		return wrap("migrate", err)
	}
	return nil
}

// Ping tells whether the database answers, for readiness checks. Errors wrap otp.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	return wrap("ping", s.pool.Ping(ctx))
}

// inTx runs fn in one transaction and gives its error the operation's context.
func (s *Store) inTx(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	return wrap(op, pgx.BeginFunc(ctx, s.pool, fn))
}

// verificationCols are read by scanVerification, in this order: the columns
// otpgate_begin_send returns (read by scanBegun), then the transaction's.
const verificationCols = `id, coalesce(nullif(phone_sealed, ''), phone), channel, locale, status, code_hashes, sends, attempts,
	max_attempts, client_ip, created_at, expires_at, closed_at, app_id, amount, payee`

// scanVerification reads a row of verificationCols and opens its address.
func (s *Store) scanVerification(row pgx.Row) (otp.Verification, error) {
	var amount, payee *string
	v, err := scanVerificationOf(row, &amount, &payee)
	if err == nil && amount != nil && payee != nil {
		v.Transaction = psd2.Transaction{Amount: *amount, Payee: *payee}
	}
	if err == nil {
		v.Address, err = s.openAddress(v.Address)
	}
	return v, err
}

// scanBegun reads the verification otpgate_begin_send returns, without its transaction.
func scanBegun(row pgx.Row) (otp.Verification, error) { return scanVerificationOf(row) }

func scanVerificationOf(row pgx.Row, extra ...any) (otp.Verification, error) {
	var (
		v      otp.Verification
		status string
		closed *time.Time
	)
	err := row.Scan(append([]any{&v.ID, &v.Address, &v.Channel, &v.Locale, &status, &v.CodeHashes, &v.Sends,
		&v.Attempts, &v.MaxAttempts, &v.ClientIP, &v.CreatedAt, &v.ExpiresAt, &closed, &v.AppID}, extra...)...)
	if err != nil {
		return otp.Verification{}, err
	}
	v.Status = otp.Status(status)
	v.CreatedAt, v.ExpiresAt = v.CreatedAt.UTC(), v.ExpiresAt.UTC()
	if closed != nil {
		v.ClosedAt = closed.UTC()
	}
	return v, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// addressIndex is what stands in a row for a phone number or email address and what a
// query by address compares with: its keyed index (pii.Keys.Index).
func (s *Store) addressIndex(address string) string { return s.keys.Index(address) }
