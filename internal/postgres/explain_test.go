package postgres

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/otp"
	"otpgate/internal/testenv"
)

// seedBase is the time of the first seeded send; one send follows per second.
func seedBase() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

// seedLarge fills a fresh database with 30,000 closed verifications and 100,000
// sends of every status over 5,000 phones (20 sends each) and one pumped phone
// (5,000 sends), then analyzes it.
func seedLarge(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	ctx := context.Background()
	pool, err := Open(ctx, testenv.PostgresDSN(tb))
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(pool.Close)
	if err := Migrate(ctx, pool); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO verifications (id, phone, channel, locale, status, sends, max_attempts, created_at, expires_at, closed_at)
		 SELECT md5(i::text)::uuid, '+8190' || lpad((i % 5000)::text, 8, '0'), 'sms', 'en',
		        (ARRAY['approved', 'expired', 'failed', 'canceled'])[i % 4 + 1], 1, 5,
		        $1::timestamptz + i * interval '3 seconds', $1::timestamptz + i * interval '3 seconds' + interval '5 minutes',
		        $1::timestamptz + i * interval '3 seconds' + interval '1 minute'
		 FROM generate_series(1, 30000) i`,
		`INSERT INTO sends (id, verification_id, phone, client_ip, status, reason, created_at, updated_at)
		 SELECT gen_random_uuid(),
		        CASE WHEN i % 5 IN (0, 3, 4) THEN md5((i / 3 % 30000 + 1)::text)::uuid END,
		        '+8190' || lpad((i % 5000)::text, 8, '0'), '10.0.' || (i % 200) || '.' || (i % 5),
		        (ARRAY['sent', 'blocked', 'duplicate', 'failed', 'sending'])[i % 5 + 1],
		        CASE i % 5 WHEN 1 THEN 'phone 1/1m' WHEN 2 THEN 'duplicate 1/5s' ELSE '' END,
		        $1::timestamptz + (i / 2) * interval '1 second', $1::timestamptz + (i / 2) * interval '1 second'
		 FROM generate_series(1, 95000) i`,
		// A pumped number: 5,000 blocked sends spread over the whole range.
		`INSERT INTO sends (id, phone, client_ip, status, reason, created_at, updated_at)
		 SELECT gen_random_uuid(), '+819099999999', '10.9.' || (i % 50) || '.1', 'blocked', 'phone 10/1h',
		        $1::timestamptz + i * interval '9 seconds', $1::timestamptz + i * interval '9 seconds'
		 FROM generate_series(1, 5000) i`,
	} {
		if _, err := pool.Exec(ctx, q, seedBase()); err != nil {
			tb.Fatalf("seed: %v", err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		tb.Fatalf("analyze: %v", err)
	}
	return pool
}

// middleCursor points at the middle of the seeded history.
func middleCursor() *otp.SendCursor {
	return &otp.SendCursor{Time: seedBase().Add(25_000 * time.Second), ID: "80000000-0000-7000-8000-000000000000"}
}

func listFilters() map[string]otp.SendFilter {
	return map[string]otp.SendFilter{
		"FirstPage":       {},
		"DeepPage":        {After: middleCursor()},
		"Phone":           {Phone: "+819000001234"},
		"PhoneDeepPage":   {Phone: "+819000001234", After: middleCursor()},
		"IP":              {ClientIP: "10.0.42.2"},
		"StatusBlocked":   {Status: otp.HistoryBlocked},
		"StatusSent":      {Status: otp.HistorySent},
		"StatusApproved":  {Status: otp.HistoryApproved},
		"StatusExpired":   {Status: otp.HistoryExpired, After: middleCursor()},
		"TimeRange":       {From: seedBase().Add(10_000 * time.Second), To: seedBase().Add(20_000 * time.Second)},
		"IPAndTimeRange":  {ClientIP: "10.0.42.2", From: seedBase().Add(10_000 * time.Second), To: seedBase().Add(20_000 * time.Second)},
		"PhoneAndBlocked": {Phone: "+819000001231", Status: otp.HistoryBlocked},
		"HotPhone":        {Phone: "+819099999999"},
		"HotPhoneDeep":    {Phone: "+819099999999", After: middleCursor()},
		"HotPhoneBlocked": {Phone: "+819099999999", Status: otp.HistoryBlocked, After: middleCursor()},
	}
}

func TestListSendsUsesIndexScans(t *testing.T) {
	pool := seedLarge(t)
	now := seedBase().Add(100 * 24 * time.Hour)
	for name, f := range listFilters() {
		t.Run(name, func(t *testing.T) {
			f.Limit = 50
			q, args, err := listQuery(f, now)
			if err != nil {
				t.Fatalf("listQuery: %v", err)
			}
			rows, err := pool.Query(context.Background(), "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+q,
				append([]any{pgx.QueryExecModeExec}, args...)...)
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			var plan strings.Builder
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatalf("scan: %v", err)
				}
				fmt.Fprintln(&plan, line)
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("explain: %v", err)
			}
			t.Logf("plan (%d sends rows read):\n%s", sendsRead(plan.String()), plan.String())
			if p := plan.String(); strings.Contains(p, "Seq Scan") || !strings.Contains(p, "Index Scan") {
				t.Errorf("got a plan without index scans, want index scans only")
			}
			if read := sendsRead(plan.String()); read > 20*(f.Limit+1) {
				t.Errorf("got %d sends rows read for a page of %d, want at most %d", read, f.Limit, 20*(f.Limit+1))
			}
		})
	}
}

// A cached generic plan cannot know that a phone has thousands of sends; once
// Postgres switched to one, a pumped phone's page would read and sort them all.
func TestRepeatedListSendsKeepsPlansForItsValues(t *testing.T) {
	cfg := seedLarge(t).Config()
	cfg.MaxConns = 1
	var (
		mu    sync.Mutex
		plans []string
	)
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		plans = append(plans, n.Message)
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, `LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_level = notice`)
		return err
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	defer pool.Close()
	s := New(pool)
	s.Now = func() time.Time { return seedBase().Add(100 * 24 * time.Hour) }
	f := listFilters()["HotPhoneBlocked"]
	for range 10 {
		if _, _, err := s.ListSends(t.Context(), f); err != nil {
			t.Fatalf("ListSends: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	seen := 0
	for _, p := range plans {
		if !strings.Contains(p, "sends s") {
			continue
		}
		seen++
		if strings.Contains(p, "Bitmap Heap Scan") || strings.Contains(p, "Sort") {
			t.Fatalf("query %d was planned without its values:\n%s", seen, p)
		}
	}
	if seen != 10 {
		t.Errorf("got %d plans, want 10", seen)
	}
}

// sendsRead is how many rows the plan's scan of sends produced or filtered away.
func sendsRead(plan string) int {
	read, inSends := 0, false
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "->") || strings.HasPrefix(line, "Limit") {
			inSends = strings.Contains(line, " on sends s ")
			if m := actualRows.FindStringSubmatch(line); inSends && m != nil {
				n, _ := strconv.Atoi(m[1])
				read += n
			}
			continue
		}
		if m := removedRows.FindStringSubmatch(line); inSends && m != nil {
			n, _ := strconv.Atoi(m[1])
			read += n
		}
	}
	return read
}

var (
	actualRows  = regexp.MustCompile(`actual rows=(\d+)`)
	removedRows = regexp.MustCompile(`Rows Removed by (?:Filter|Index Recheck): (\d+)`)
)

func BenchmarkListSends(b *testing.B) {
	pool := seedLarge(b)
	s := New(pool)
	s.Now = func() time.Time { return seedBase().Add(100 * 24 * time.Hour) }
	filters := listFilters()
	for _, name := range slices.Sorted(maps.Keys(filters)) {
		f := filters[name]
		b.Run(name, func(b *testing.B) {
			f.Limit = 50
			n := 0
			for b.Loop() {
				rows, _, err := s.ListSends(context.Background(), f)
				if err != nil {
					b.Fatalf("ListSends: %v", err)
				}
				n += len(rows)
			}
			b.ReportMetric(float64(n)/float64(b.N), "rows/op")
		})
	}
}
