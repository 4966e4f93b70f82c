package http

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
)

// planLog keeps the plans PostgreSQL's auto_explain sends as notices.
type planLog struct {
	mu    sync.Mutex
	plans []string
}

func (p *planLog) add(_ *pgconn.PgConn, n *pgconn.Notice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plans = append(p.plans, n.Message)
}

// take returns the plans of statements on sends noted since the last take.
func (p *planLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, plan := range p.plans {
		if strings.Contains(plan, "FROM sends s") {
			out = append(out, plan)
		}
	}
	p.plans = nil
	return out
}

// explainedPool opens a pool whose sessions report the plan of every statement
// they run, with actual row counts, so a test sees the plans the API's own
// queries got.
func explainedPool(t *testing.T, plans *planLog) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
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
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		t.Fatalf("open a pool with auto_explain (needs a superuser and the auto_explain module): %v", err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// seedHistory fills the database with 30,000 verifications and 100,000 sends of
// every status: 95,000 over 5,000 phones and 1,000 IPs, two a second, and 5,000
// blocked sends of one pumped phone spread over the whole range.
func seedHistory(t *testing.T, pool *pgxpool.Pool, base time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO verifications (id, phone, channel, locale, status, sends, max_attempts, created_at, expires_at, closed_at)
		 SELECT md5(i::text)::uuid, '+8190' || (12340000 + i % 5000), 'sms', 'en',
		        (ARRAY['approved', 'expired', 'failed', 'canceled'])[i % 4 + 1], 1, 5,
		        $1::timestamptz + i * interval '1.5 seconds', $1::timestamptz + i * interval '1.5 seconds' + interval '5 minutes',
		        $1::timestamptz + i * interval '1.5 seconds' + interval '1 minute'
		 FROM generate_series(1, 30000) i`,
		`INSERT INTO sends (id, verification_id, phone, client_ip, status, reason, provider_message_id, created_at, updated_at)
		 SELECT gen_random_uuid(),
		        CASE WHEN i % 5 IN (0, 3, 4) THEN md5((i / 3 % 30000 + 1)::text)::uuid END,
		        '+8190' || (12340000 + i % 5000), '10.1.' || (i % 250) || '.' || (i % 4),
		        (ARRAY['sent', 'blocked', 'duplicate', 'failed', 'sending'])[i % 5 + 1],
		        CASE i % 5 WHEN 1 THEN 'phone 1/1m' WHEN 2 THEN 'duplicate 1/5s' ELSE '' END,
		        CASE i % 5 WHEN 0 THEN 'msg-' || i ELSE '' END,
		        $1::timestamptz + (i / 2) * interval '1 second', $1::timestamptz + (i / 2) * interval '1 second'
		 FROM generate_series(1, 95000) i`,
		`INSERT INTO sends (id, phone, client_ip, status, reason, created_at, updated_at)
		 SELECT gen_random_uuid(), '+819099999999', '10.9.' || (i % 50) || '.1', 'blocked', 'phone 10/1h',
		        $1::timestamptz + i * interval '9 seconds', $1::timestamptz + i * interval '9 seconds'
		 FROM generate_series(1, 5000) i`,
	} {
		if _, err := pool.Exec(ctx, q, base); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatalf("analyze: %v", err)
	}
}

// TestAdminListQueryPlans pages the API through 100,000 sends with every filter and
// checks, on the plan PostgreSQL actually ran, that sends were read through an index.
func TestAdminListQueryPlans(t *testing.T) {
	plans := &planLog{}
	pool := explainedPool(t, plans)
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	seedHistory(t, pool, base)
	store := postgres.New(pool)
	store.Now = func() time.Time { return base.Add(60 * 24 * time.Hour) }
	rdb, prefix := testenv.Redis(t)
	e := &adminEnv{t: t, pool: pool, store: store, limiter: ratelimit.New(rdb, prefix), logs: &syncBuffer{}}
	e.h = NewAdminServer(AdminDeps{Logger: discardLogger(), Admin: otp.NewAdmin(store, e.limiter, nil), Token: testAdminToken, DefaultRegion: "JP"})
	plans.take()

	deep := encodeCursor(&otp.SendCursor{Time: base.Add(25_000 * time.Second), ID: "80000000-0000-7000-8000-000000000000"})
	from, to := base.Add(10_000*time.Second).Format(time.RFC3339), base.Add(20_000*time.Second).Format(time.RFC3339)
	for _, tc := range []struct{ name, query string }{
		{"FirstPage", ""},
		{"DeepPage", "cursor=" + deep},
		{"Phone", "phone=090-1234-1234"},
		{"PhoneDeepPage", "phone=090-1234-1234&cursor=" + deep},
		{"PumpedPhone", "phone=09099999999"},
		{"PumpedPhoneBlockedDeepPage", "phone=09099999999&status=blocked&cursor=" + deep},
		{"IP", "ip=10.1.42.2"},
		{"StatusSending", "status=sending"},
		{"StatusSent", "status=sent"},
		{"StatusFailed", "status=failed"},
		{"StatusBlocked", "status=blocked"},
		{"StatusDuplicate", "status=duplicate"},
		{"StatusApproved", "status=approved"},
		{"StatusExpiredDeepPage", "status=expired&cursor=" + deep},
		{"TimeRange", "from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to)},
		{"IPAndTimeRange", "ip=10.1.42.2&from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to)},
		{"PhoneAndStatus", "phone=090-1234-1231&status=blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(t, http.MethodGet, "/admin/api/sends?limit=50&"+tc.query, bearer(testAdminToken), nil)
			if w.Code != http.StatusOK {
				t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
			}
			got := plans.take()
			if len(got) != 1 {
				t.Fatalf("got %d plans of the list query, want 1", len(got))
			}
			plan := got[0][strings.Index(got[0], "\n")+1:] // the first line is the duration
			t.Logf("plan:\n%s", plan)
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("got a plan with a sequential scan, want index scans only")
			}
			if !strings.Contains(plan, "Index Scan using sends_") && !strings.Contains(plan, "Bitmap Index Scan on sends_") {
				t.Errorf("got a plan that reads sends without one of its indexes")
			}
		})
	}
}
