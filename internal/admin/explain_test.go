package admin

import (
	"context"
	"net/http"
	"net/url"
	testfixture "otpgate/internal/testenv/fixture"
	"regexp"
	"strings"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/postgres"
	"otpgate/internal/testenv"
)

// TestAdminListQueryPlans pages the API through 100,000 sends with every filter and
// checks, on the plan PostgreSQL actually ran, that sends were read through an index. It
// is the admin test that runs on PostgreSQL: the plans are what it checks.
func TestAdminListQueryPlans(t *testing.T) {
	pool, plans := testenv.ExplainedPool(t, testenv.PostgresDSN(t))
	if err := postgres.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	testenv.SeedHistory(t, pool, base)
	store := postgres.New(pool, testenv.DataKeys())
	store.Now = func() time.Time { return base.Add(60 * 24 * time.Hour) }
	// The list query needs no limiter.
	e := &adminEnv{t: t, logs: &testfixture.SyncBuffer{}}
	e.h = NewServer(Deps{Logger: discardLogger(), Admin: history.NewAdmin(store, nil, nil), Token: testAdminToken, DefaultRegion: "JP"})
	plans.Take("") // the seed's

	deep := encodeCursor(&history.SendCursor{Time: base.Add(25_000 * time.Second), ID: "80000000-0000-7000-8000-000000000000"})
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
			got := plans.Take("FROM sends s")
			if len(got) != 1 {
				t.Fatalf("got %d plans of the list query, want 1", len(got))
			}
			plan := got[0][strings.Index(got[0], "\n")+1:] // the first line is the duration
			t.Logf("plan:\n%s", plan)
			if strings.Contains(emptyDayScan.ReplaceAllString(plan, "Empty Day"), "Seq Scan") {
				t.Errorf("got a plan with a sequential scan, want index scans only")
			}
			if !strings.Contains(plan, "Index Scan using sends_") && !strings.Contains(plan, "Bitmap Index Scan on sends_") {
				t.Errorf("got a plan that reads sends without one of its indexes")
			}
		})
	}
}

// emptyDayScan is the scan of a day partition of sends that holds nothing (the seeded
// history lies in other days): the planner reads an empty table whole, which costs nothing.
var emptyDayScan = regexp.MustCompile(`Seq Scan on sends_p\d{8} \S+ +\(cost=0\.00\.\.0\.00 `)
