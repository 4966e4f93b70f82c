package postgres

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/testenv"
)

// seedBase is when the seeded history starts.
func seedBase() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

// seedLarge fills a fresh database with testenv.SeedHistory's 100,000 sends from
// seedBase and returns a pool on it.
func seedLarge(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool := migrated(tb)
	testenv.SeedHistory(tb, pool, seedBase())
	return pool
}

// migrated is a pool on a fresh, migrated database.
func migrated(tb testing.TB) *pgxpool.Pool {
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
	return pool
}

// middleCursor points at the middle of the seeded history.
func middleCursor() *history.SendCursor {
	return &history.SendCursor{Time: seedBase().Add(25_000 * time.Second), ID: "80000000-0000-7000-8000-000000000000"}
}

func listFilters() map[string]history.SendFilter {
	return map[string]history.SendFilter{
		"FirstPage":       {},
		"DeepPage":        {After: middleCursor()},
		"Phone":           {Phone: "+819012341234"},
		"PhoneDeepPage":   {Phone: "+819012341234", After: middleCursor()},
		"IP":              {ClientIP: "10.1.42.2"},
		"StatusBlocked":   {Status: history.StatusBlocked},
		"StatusSent":      {Status: history.StatusSent},
		"StatusApproved":  {Status: history.StatusApproved},
		"StatusExpired":   {Status: history.StatusExpired, After: middleCursor()},
		"TimeRange":       {From: seedBase().Add(10_000 * time.Second), To: seedBase().Add(20_000 * time.Second)},
		"IPAndTimeRange":  {ClientIP: "10.1.42.2", From: seedBase().Add(10_000 * time.Second), To: seedBase().Add(20_000 * time.Second)},
		"PhoneAndBlocked": {Phone: "+819012341231", Status: history.StatusBlocked},
		"HotPhone":        {Phone: "+819099999999"},
		"HotPhoneDeep":    {Phone: "+819099999999", After: middleCursor()},
		"HotPhoneBlocked": {Phone: "+819099999999", Status: history.StatusBlocked, After: middleCursor()},
	}
}

func TestListSendsUsesIndexScans(t *testing.T) {
	pool := seedLarge(t)
	now := seedBase().Add(100 * 24 * time.Hour)
	for name, f := range listFilters() {
		t.Run(name, func(t *testing.T) {
			f.Limit = 50
			q, args, err := listQuery(f, now, func(a string) string { return a })
			if err != nil {
				t.Fatalf("listQuery: %v", err)
			}
			plan := explain(t, pool, q, args...)
			t.Logf("plan (%d sends rows read):\n%s", sendsRead(plan), plan)
			if p := emptyDaysOut(plan); strings.Contains(p, "Seq Scan") || !strings.Contains(p, "Index Scan") {
				t.Errorf("got a plan without index scans, want index scans only")
			}
			if read := sendsRead(plan); read > 20*(f.Limit+1) {
				t.Errorf("got %d sends rows read for a page of %d, want at most %d", read, f.Limit, 20*(f.Limit+1))
			}
		})
	}
}

// explain runs q with args under EXPLAIN ANALYZE and returns the plan it took.
func explain(t *testing.T, pool *pgxpool.Pool, q string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), explainAnalyze+q, append([]any{pgx.QueryExecModeExec}, args...)...)
	return planOf(t, rows, err)
}

// explainAnalyze runs the statement after it and answers the plan it took, without the
// costs and timings that change from run to run.
const explainAnalyze = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "

// planOf reads the lines of an EXPLAIN's answer (rows, or the error of its query) into one
// text, a line each.
func planOf(t *testing.T, rows pgx.Rows, err error) string {
	t.Helper()
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return strings.Join(lines, "\n") + "\n"
}

// A check by phone reads the newest verification without an index over all verifications
// keyed by the address (migrations/00140): the pending index, else the address's newest
// send of a verification, whose day partitions' indexes are small. Neither reads a table
// whole, nor an address's refused sends.
func TestNewestUsesIndexScans(t *testing.T) {
	pool := seedLarge(t)
	keys := testenv.DataKeys()
	ctx := context.Background()
	pending := "+819055550000"
	if _, err := pool.Exec(ctx, `INSERT INTO verifications (id, phone, phone_sealed, channel, locale, status, sends, max_attempts, created_at, expires_at)
		VALUES (gen_random_uuid(), $1, $2, 'sms', 'en', 'pending', 1, 5, now(), now() + interval '5 minutes')`,
		keys.Index(pending), keys.Seal(pending)); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		phone string
		found bool
	}{
		"Pending":  {pending, true},
		"Closed":   {"+819012340010", true}, // its sends name closed verifications
		"Unknown":  {"+819000000000", false},
		"OnlySent": {"+819099999999", false}, // 5,000 blocked sends, no verification
	} {
		t.Run(name, func(t *testing.T) {
			plan := explain(t, pool, newestQuery, keys.Index(c.phone), otp.DefaultAppID)
			t.Logf("plan:\n%s", plan)
			if strings.Contains(emptyDaysOut(plan), "Seq Scan") {
				t.Errorf("got a plan that reads a table whole, want index scans only")
			}
			// A pumped number's refused sends are not walked (migrations/00150).
			if read := sendsRead(plan); read > 1 {
				t.Errorf("got %d sends rows read, want at most the one naming the verification", read)
			}
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM (`+newestQuery+`) v`, keys.Index(c.phone), otp.DefaultAppID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if found := n == 1; found != c.found {
				t.Errorf("found %d verifications, want found %v", n, c.found)
			}
		})
	}
}

// A cached generic plan cannot know that a phone has thousands of sends; once
// Postgres switched to one, a pumped phone's page would read and sort them all.
func TestRepeatedListSendsKeepsPlansForItsValues(t *testing.T) {
	// One session, so that the statement's repeats meet its plan cache.
	pool, plans := testenv.ExplainedPool(t, seedLarge(t).Config().ConnString())
	s := New(pool, testenv.DataKeys())
	s.Now = func() time.Time { return seedBase().Add(100 * 24 * time.Hour) }
	f := listFilters()["HotPhoneBlocked"]
	for range 10 {
		if _, _, err := s.ListSends(t.Context(), f); err != nil {
			t.Fatalf("ListSends: %v", err)
		}
	}
	seen := 0
	for _, p := range plans.Take("sends s") {
		seen++
		if strings.Contains(p, "Bitmap Heap Scan") || sortNode.MatchString(p) {
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
			inSends = sendsScan.MatchString(line)
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

// emptyDaysOut is plan without the scans of the day partitions of sends that the seeded
// history (in 2030, all of it in the default partition) leaves empty: the planner reads an
// empty table whole, which costs nothing.
func emptyDaysOut(plan string) string {
	return emptyDay.ReplaceAllString(plan, "Empty Day")
}

var (
	emptyDay = regexp.MustCompile(`Seq Scan on sends_p\d{8} `)
	// sendsScan is a scan of sends or of one of its partitions (migrations/00100).
	sendsScan = regexp.MustCompile(` on sends(?:_\w+)? s(?:_\d+)? `)
	// sortNode is a Sort step, not a Merge Append's sort key.
	sortNode    = regexp.MustCompile(`\bSort\s+\(`)
	actualRows  = regexp.MustCompile(`actual rows=(\d+)`)
	removedRows = regexp.MustCompile(`Rows Removed by (?:Filter|Index Recheck): (\d+)`)
)

func BenchmarkListSends(b *testing.B) {
	pool := seedLarge(b)
	s := New(pool, testenv.DataKeys())
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

// The outcome writer finds its batch's rows by their primary key when it knows when each
// send was dated (the service's sends), else by id within the window of their ids' times
// (sendWindow: an hour either side). On a day partition that has no statistics yet (every
// new day's, until autovacuum analyzes it), the window statement's generic plan scanned the
// window and joined it to the batch: every send of those hours read for each batch.
func TestOutcomeBatchReadsItsRowsOnly(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	// 20,000 sends of the last 20 minutes in today's partition, never analyzed.
	if _, err := pool.Exec(ctx, `WITH v AS (
			INSERT INTO verifications (id, phone, channel, locale, status, sends, max_attempts, created_at, expires_at)
			VALUES (gen_random_uuid(), 'h1.x', 'sms', 'en', 'pending', 1, 5, now(), now() + interval '5 minutes') RETURNING id
		)
		INSERT INTO sends (id, verification_id, phone, client_ip, status, created_at, updated_at)
		SELECT gen_random_uuid(), v.id, 'h1.x', '192.0.2.1', 'sending', now() - i * interval '60 milliseconds', now()
		FROM v, generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for name, c := range map[string]struct {
		sql   string
		extra func([]otp.FinishSend) []any
	}{
		"Dated": {outcomeDatedSQL, func(b []otp.FinishSend) []any {
			at := make([]time.Time, len(b))
			for i, p := range b {
				at[i] = p.SendAt
			}
			return []any{at}
		}},
		"Window": {outcomeWindowSQL, func([]otp.FinishSend) []any { return []any{now.Add(-sendMargin), now.Add(sendMargin)} }},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := pool.Query(ctx, `SELECT id::text, created_at FROM sends WHERE status = 'sending' ORDER BY created_at LIMIT 3`)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (otp.FinishSend, error) {
				p := otp.FinishSend{Status: otp.SendSent, Provider: "webhook", Now: now}
				err := r.Scan(&p.SendID, &p.SendAt)
				p.ProviderID = "msg-" + p.SendID
				return p, err
			})
			if err != nil || len(batch) != 3 {
				t.Fatalf("batch: %v, %d sends", err, len(batch))
			}
			plan := explainGeneric(t, pool, c.sql+outcomeRest, append(outcomeArgs(batch), c.extra(batch)...))
			// The Update node's rows are the ones it wrote; only the scans' count as read.
			read := sendsRead(strings.ReplaceAll(plan, "Update on sends", "Update of sends"))
			t.Logf("plan (%d sends rows read):\n%s", read, plan)
			if read > len(batch) {
				t.Errorf("got %d sends rows read for a batch of %d, want its rows only", read, len(batch))
			}
			ids := []string{batch[0].SendID, batch[1].SendID, batch[2].SendID}
			var sent int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE id = ANY($1::uuid[]) AND status = 'sent'`, ids).Scan(&sent); err != nil || sent != 3 {
				t.Errorf("got %d of the batch sent (%v), want 3", sent, err)
			}
		})
	}
}

// explainGeneric runs q with args under EXPLAIN ANALYZE as a prepared statement planned
// without its values, as PostgreSQL may plan a statement pgx prepared from its sixth run on,
// and returns the plan it took.
func explainGeneric(t *testing.T, pool *pgxpool.Pool, q string, args []any) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	name := fmt.Sprintf("generic_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, `RESET plan_cache_mode; DEALLOCATE `+name) }()
	if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+q); err != nil {
		t.Fatal(err)
	}
	// EXECUTE takes its values written out: each as PostgreSQL quotes it.
	lits := make([]string, len(args))
	for i, a := range args {
		cast := "text[]"
		switch a.(type) {
		case []time.Time:
			cast = "timestamptz[]"
		case time.Time:
			cast = "timestamptz"
		}
		if err := conn.QueryRow(ctx, `SELECT quote_literal($1::`+cast+`::text)`, a).Scan(&lits[i]); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.Query(ctx, explainAnalyze+`EXECUTE `+name+`(`+strings.Join(lits, ", ")+`)`)
	return planOf(t, rows, err)
}

// The service dates a send row and its outcome with one time.Time, to the nanosecond;
// the row keeps microseconds. The dated statement must still find the row by it.
func TestDatedOutcomeFindsTheRowByItsSendTime(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	s := New(pool, testenv.DataKeys())
	at := time.Now().Truncate(time.Second).Add(123_456_789 * time.Nanosecond)
	p := otp.BeginSend{
		Phone: "+819012345678", Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "test",
		Now: at, TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(), CodeHash: func(string) []byte { return []byte("h") },
	}
	if _, err := s.BeginSend(ctx, p); err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	batch := []otp.FinishSend{{SendID: p.SendID, Status: otp.SendSent, Provider: "test", ProviderID: "pm-1", Now: at.Add(time.Second), SendAt: at}}
	var found []string
	if err := pool.QueryRow(ctx, outcomeDatedSQL+outcomeRest, append(outcomeArgs(batch), []time.Time{at})...).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Errorf("the dated statement found %v, want the send %s", found, p.SendID)
	}
}
