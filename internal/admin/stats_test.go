package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestAdminAPIStats(t *testing.T) {
	now := time.Now().UTC()
	e := newAdminEnv(t, func(d *Deps) { d.Now = func() time.Time { return now } })
	e.seedFixture()

	s := getJSON[statsResponse](t, e, "/admin/api/stats?since=3h&bucket=1h")
	if s.BucketSeconds != 3600 || len(s.Buckets) < 3 || len(s.Buckets) > 4 {
		t.Fatalf("got %d buckets of %ds, want 3 or 4 hourly ones", len(s.Buckets), s.BucketSeconds)
	}
	var sends, failed, approvals, duplicates int
	blocked := map[string]int{}
	for _, b := range s.Buckets {
		sends, failed, approvals, duplicates = sends+b.Sends, failed+b.Failed, approvals+b.Approvals, duplicates+b.Duplicates
		for r, n := range b.Blocked {
			blocked[r] += n
		}
	}
	if sends != 4 || failed != 1 || approvals != 1 || duplicates != 1 || blocked["phone 1/1m"] != 1 {
		t.Errorf("got sends %d failed %d approvals %d duplicates %d blocked %v, want 4, 1, 1, 1 and phone 1/1m: 1",
			sends, failed, approvals, duplicates, blocked)
	}

	t.Run("EmptyBucketsHaveAnEmptyBlockedObject", func(t *testing.T) {
		body := e.call(t, http.MethodGet, "/admin/api/stats?since=3h&bucket=1h", bearer(testAdminToken), nil).Body.String()
		if !strings.Contains(body, `"blocked":{}`) || strings.Contains(body, `"blocked":null`) {
			t.Errorf("got %s, want blocked as {} in the empty first bucket and never null", body)
		}
	})

	t.Run("SinceAsTime", func(t *testing.T) {
		s := getJSON[statsResponse](t, e, "/admin/api/stats?since="+url.QueryEscape(now.Add(-48*time.Hour).Format(time.RFC3339))+"&bucket=1d")
		if s.BucketSeconds != 86400 || len(s.Buckets) < 2 || len(s.Buckets) > 3 {
			t.Errorf("got %d buckets of %ds, want 2 or 3 daily ones", len(s.Buckets), s.BucketSeconds)
		}
	})
}
