package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Plans keeps the plans PostgreSQL's auto_explain sends as notices to the sessions of an
// ExplainedPool.
type Plans struct {
	mu    sync.Mutex
	plans []string
}

func (p *Plans) add(_ *pgconn.PgConn, n *pgconn.Notice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plans = append(p.plans, n.Message)
}

// Take returns the plans noted since the last Take that contain s, oldest first, and
// forgets all noted so far.
func (p *Plans) Take(s string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, plan := range p.plans {
		if strings.Contains(plan, s) {
			out = append(out, plan)
		}
	}
	p.plans = nil
	return out
}

// ExplainedPool opens a pool on dsn whose sessions report the plan of every statement they
// run, with actual row counts, into the returned Plans, so a test sees the plans the code's
// own queries got. The pool has one connection: a statement run again meets that session's
// plan cache, as it would on a busy server. It needs a superuser and the auto_explain
// module, and is closed at cleanup.
func ExplainedPool(tb testing.TB, dsn string) (*pgxpool.Pool, *Plans) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	plans := &Plans{}
	cfg.MaxConns = 1
	cfg.ConnConfig.OnNotice = plans.add
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, q := range []string{
			"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_level = notice",
			"SET auto_explain.log_analyze = on", "SET auto_explain.log_timing = off",
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		tb.Fatalf("testenv: open a pool with auto_explain (needs a superuser and the auto_explain module): %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool, plans
}

// SeedHistory fills a migrated otpgate database with a large history, then analyzes it:
// 30,000 closed verifications (approved, expired, failed and canceled in turn, one every
// 1.5 seconds from base), and 100,000 sends of every status. 95,000 of them, two a second
// from base, go to 5,000 phones (+819012340000 to +819012344999, 19 each) from 1,000 client
// IPs (10.1.0.0 to 10.1.249.3); the other 5,000 are blocked sends of one pumped phone,
// +819099999999, spread over the whole range.
func SeedHistory(tb testing.TB, pool *pgxpool.Pool, base time.Time) {
	tb.Helper()
	ctx := context.Background()
	// The rows keep each address as the store does (DataKeys): its index, sealed value and
	// prefix (migrations/00110), one seal per phone.
	keys := DataKeys()
	idx, sealed := make([]string, 5000), make([]string, 5000)
	for n := range idx {
		phone := fmt.Sprintf("+8190%d", 12340000+n)
		idx[n], sealed[n] = keys.Index(phone), keys.Seal(phone)
	}
	const pumped = "+819099999999"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO verifications (id, phone, phone_sealed, phone_prefix, channel, locale, status, sends, max_attempts, created_at, expires_at, closed_at)
		 SELECT md5(i::text)::uuid, ($2::text[])[i % 5000 + 1], ($3::text[])[i % 5000 + 1], left('+8190' || (12340000 + i % 5000), 9), 'sms', 'en',
		        (ARRAY['approved', 'expired', 'failed', 'canceled'])[i % 4 + 1], 1, 5,
		        $1::timestamptz + i * interval '1.5 seconds', $1::timestamptz + i * interval '1.5 seconds' + interval '5 minutes',
		        $1::timestamptz + i * interval '1.5 seconds' + interval '1 minute'
		 FROM generate_series(1, 30000) i`, []any{base, idx, sealed}},
		{`INSERT INTO sends (id, verification_id, phone, phone_sealed, phone_prefix, client_ip, status, reason, provider_message_id, created_at, updated_at)
		 SELECT gen_random_uuid(),
		        CASE WHEN i % 5 IN (0, 3, 4) THEN md5((i / 3 % 30000 + 1)::text)::uuid END,
		        ($2::text[])[i % 5000 + 1], ($3::text[])[i % 5000 + 1], left('+8190' || (12340000 + i % 5000), 9),
		        '10.1.' || (i % 250) || '.' || (i % 4),
		        (ARRAY['sent', 'blocked', 'duplicate', 'failed', 'sending'])[i % 5 + 1],
		        CASE i % 5 WHEN 1 THEN 'phone 1/1m' WHEN 2 THEN 'duplicate 1/5s' ELSE '' END,
		        CASE i % 5 WHEN 0 THEN 'msg-' || i ELSE '' END,
		        $1::timestamptz + (i / 2) * interval '1 second', $1::timestamptz + (i / 2) * interval '1 second'
		 FROM generate_series(1, 95000) i`, []any{base, idx, sealed}},
		{`INSERT INTO sends (id, phone, phone_sealed, phone_prefix, client_ip, status, reason, created_at, updated_at)
		 SELECT gen_random_uuid(), $2, $3, $4, '10.9.' || (i % 50) || '.1', 'blocked', 'phone 10/1h',
		        $1::timestamptz + i * interval '9 seconds', $1::timestamptz + i * interval '9 seconds'
		 FROM generate_series(1, 5000) i`, []any{base, keys.Index(pumped), keys.Seal(pumped), pumped[:len(pumped)-4]}},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			tb.Fatalf("testenv: seed history: %v", err)
		}
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		tb.Fatalf("testenv: analyze: %v", err)
	}
}
