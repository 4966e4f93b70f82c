package admin

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
)

func TestAdminAuth(t *testing.T) {
	e := newAdminEnv(t, nil)
	e.seedFixture()

	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"APIWithoutCredentialsIsRefused", "/admin/api/sends", "", http.StatusUnauthorized},
		{"APIWithWrongBearerIsRefused", "/admin/api/sends", bearer("wrong-token"), http.StatusUnauthorized},
		{"APIWithPrefixOfTokenIsRefused", "/admin/api/sends", bearer(testAdminToken[:10]), http.StatusUnauthorized},
		{"APIWithWrongBasicIsRefused", "/admin/api/sends", basic("admin", "wrong"), http.StatusUnauthorized},
		{"APIWithTokenAsBasicUserIsRefused", "/admin/api/sends", basic(testAdminToken, ""), http.StatusUnauthorized},
		{"APIWithBearerIsServed", "/admin/api/sends", bearer(testAdminToken), http.StatusOK},
		{"APIWithLowerCaseSchemeIsServed", "/admin/api/sends", "bearer " + testAdminToken, http.StatusOK},
		{"APIWithBasicIsServed", "/admin/api/sends", basic("anyone", testAdminToken), http.StatusOK},
		{"PageWithoutCredentialsIsRefused", "/admin/", "", http.StatusUnauthorized},
		{"PageWithWrongPasswordIsRefused", "/admin/?phone=" + url.QueryEscape(phoneA), basic("admin", "nope"), http.StatusUnauthorized},
		{"PageWithBasicIsServed", "/admin/", basic("", testAdminToken), http.StatusOK},
		{"VerificationPageWithoutCredentialsIsRefused", "/admin/verifications/" + uuid.NewString(), "", http.StatusUnauthorized},
		{"ChartsWithoutCredentialsAreRefused", "/admin/charts", "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(t, http.MethodGet, tc.path, tc.auth, nil)
			if w.Code != tc.want {
				t.Fatalf("got %d, want %d; body %s", w.Code, tc.want, w.Body)
			}
			if tc.want != http.StatusUnauthorized {
				return
			}
			challenges := strings.Join(w.Header().Values("WWW-Authenticate"), ", ")
			if !strings.Contains(challenges, `Basic realm="otpgate admin"`) {
				t.Errorf("WWW-Authenticate: got %q, want a Basic challenge", challenges)
			}
			if strings.HasPrefix(tc.path, "/admin/api/") {
				if p := decodeProblem(t, w); p.Code != "unauthorized" {
					t.Errorf("problem code: got %v, want %v", p.Code, "unauthorized")
				}
			}
			for _, secret := range []string{phoneA, ipA, "192.0.2"} {
				if strings.Contains(w.Body.String(), secret) {
					t.Errorf("refused response shows %q", secret)
				}
			}
		})
	}

	t.Run("EmptyTokenRefusesEveryone", func(t *testing.T) {
		locked := newAdminEnv(t, func(d *Deps) { d.Token = "" })
		for _, auth := range []string{"", "Bearer ", "Bearer", basic("admin", "")} {
			if w := locked.call(t, http.MethodGet, "/admin/api/sends", auth, nil); w.Code != http.StatusUnauthorized {
				t.Errorf("Authorization %q: got %d, want 401", auth, w.Code)
			}
		}
	})

	t.Run("LogsNeverHoldTheToken", func(t *testing.T) {
		logs := e.logs.String()
		basicCred := base64.StdEncoding.EncodeToString([]byte("anyone:" + testAdminToken))
		for _, secret := range []string{testAdminToken, basicCred, "Authorization", "authorization"} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain %q", secret)
			}
		}
		if !strings.Contains(logs, `"route":"/admin/api/sends"`) {
			t.Errorf("access log: got %q, want a line per request naming the route", logs)
		}
	})

	t.Run("ProbesAndMetricsNeedNoToken", func(t *testing.T) {
		withMetrics := newAdminEnv(t, func(d *Deps) {
			d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "otpgate_up 1") })
		})
		for _, path := range []string{"/healthz", "/readyz", "/metrics", "/admin/static/admin.css"} {
			w := withMetrics.call(t, http.MethodGet, path, "", nil)
			if w.Code != http.StatusOK {
				t.Errorf("GET %s: got %d, want 200", path, w.Code)
			}
		}
	})
}

// sendsPage is the JSON of GET /admin/api/sends as a client reads it.
type sendsPage struct {
	Sends      []adminSend `json:"sends"`
	NextCursor string      `json:"next_cursor"`
}

func ids(sends []adminSend) []string {
	out := make([]string, len(sends))
	for i, s := range sends {
		out[i] = s.ID
	}
	return out
}

func TestAdminAPISends(t *testing.T) {
	e := newAdminEnv(t, nil)
	f := e.seedFixture()

	t.Run("NewestFirstWithEveryStatus", func(t *testing.T) {
		page := getJSON[sendsPage](t, e, "/admin/api/sends")
		want := []string{f.sendD, f.sendC, f.sendB, f.blockedA, f.duplicateA, f.sendA}
		if got := ids(page.Sends); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if page.NextCursor != "" {
			t.Errorf("next_cursor: got %q, want empty on the last page", page.NextCursor)
		}
		status := map[string]string{}
		for _, s := range page.Sends {
			status[s.ID] = s.Status
		}
		for id, want := range map[string]string{
			f.sendA: "approved", f.duplicateA: "duplicate", f.blockedA: "blocked:phone 1/1m",
			f.sendB: "failed", f.sendC: "expired", f.sendD: "expired",
		} {
			if status[id] != want {
				t.Errorf("status of %s: got %q, want %q", id, status[id], want)
			}
		}
		a := page.Sends[len(page.Sends)-1]
		if a.Phone != phoneA || a.ClientIP != ipA || a.ProviderMessageID != "msg-"+f.sendA[:8] || a.VerificationID != f.verA {
			t.Errorf("send A: got %+v", a)
		}
		if blocked := page.Sends[3]; blocked.Reason != "phone 1/1m" || blocked.SendStatus != "blocked" {
			t.Errorf("blocked send: got reason %q send_status %q, want phone 1/1m and blocked", blocked.Reason, blocked.SendStatus)
		}
	})

	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"PhoneInE164", "phone=" + url.QueryEscape(phoneA), []string{f.blockedA, f.duplicateA, f.sendA}},
		{"PhoneInNationalFormat", "phone=090-1234-5678", []string{f.blockedA, f.duplicateA, f.sendA}},
		{"PhoneWithSpacesAndBrackets", "phone=" + url.QueryEscape("+81 (90) 1234 5678"), []string{f.blockedA, f.duplicateA, f.sendA}},
		{"PhoneInFullWidthDigits", "phone=" + url.QueryEscape("０９０－１２３４－５６７８"), []string{f.blockedA, f.duplicateA, f.sendA}},
		{"IP", "ip=" + ipB, []string{f.sendC, f.sendB}},
		{"IPv6AddressMatchesItsNetwork", "ip=" + url.QueryEscape("2001:db8:1:2:aaaa::1"), []string{f.sendD}},
		{"IPv6Network", "ip=" + url.QueryEscape(ipV6), []string{f.sendD}},
		{"StatusBlocked", "status=blocked", []string{f.blockedA}},
		{"StatusDuplicate", "status=duplicate", []string{f.duplicateA}},
		{"StatusApproved", "status=approved", []string{f.sendA}},
		{"StatusFailed", "status=failed", []string{f.sendB}},
		{"StatusExpired", "status=expired", []string{f.sendD, f.sendC}},
		{"TimeRange", "from=" + e.base.Add(30*time.Second).Format(time.RFC3339) + "&to=" + e.base.Add(2*time.Minute+time.Second).Format(time.RFC3339),
			[]string{f.sendC, f.sendB, f.blockedA}},
		{"TimeRangeAsDatetimeLocal", "from=" + e.base.Add(time.Minute).Format("2006-01-02T15:04:05"), []string{f.sendD, f.sendC, f.sendB}},
		{"PhoneAndStatus", "phone=" + url.QueryEscape(phoneA) + "&status=duplicate", []string{f.duplicateA}},
		{"NoMatch", "phone=" + url.QueryEscape("+819011112222"), []string{}},
	} {
		t.Run("Filter"+tc.name, func(t *testing.T) {
			page := getJSON[sendsPage](t, e, "/admin/api/sends?"+tc.query)
			if got := ids(page.Sends); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("PagesFollowTheCursorWithFiltersKept", func(t *testing.T) {
		var got []string
		cursor := ""
		for range 10 {
			page := getJSON[sendsPage](t, e, "/admin/api/sends?limit=2&phone=09012345678&cursor="+url.QueryEscape(cursor))
			got = append(got, ids(page.Sends)...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if want := []string{f.blockedA, f.duplicateA, f.sendA}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("OneSend", func(t *testing.T) {
		s := getJSON[adminSend](t, e, "/admin/api/sends/"+f.sendB)
		if s.ID != f.sendB || s.Status != "failed" || s.Error == "" || s.Phone != phoneB {
			t.Errorf("got %+v, want the failed send of %s with its error", s, phoneB)
		}
	})

	for name, id := range map[string]string{"UnknownSendIsNotFound": uuid.NewString(), "MalformedSendIDIsNotFound": "not-a-uuid"} {
		t.Run(name, func(t *testing.T) {
			w := e.call(t, http.MethodGet, "/admin/api/sends/"+id, bearer(testAdminToken), nil)
			if w.Code != http.StatusNotFound {
				t.Fatalf("got %d, want 404", w.Code)
			}
			if p := decodeProblem(t, w); p.Code != "not_found" {
				t.Errorf("code: got %v, want not_found", p.Code)
			}
		})
	}

	t.Run("VerificationPastItsExpiryIsExpired", func(t *testing.T) {
		c := getJSON[adminSend](t, e, "/admin/api/sends/"+f.sendC)
		v := getJSON[verificationResponse](t, e, "/admin/api/verifications/"+c.VerificationID)
		if v.Verification.Status != "expired" || len(v.Sends) != 1 || v.Sends[0].Status != "expired" {
			t.Errorf("got status %q with sends %+v, want expired like its send", v.Verification.Status, v.Sends)
		}
	})

	t.Run("VerificationDetailWithoutCodes", func(t *testing.T) {
		w := e.call(t, http.MethodGet, "/admin/api/verifications/"+f.verA, bearer(testAdminToken), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
		}
		assertNoCodeHash(t, w.Body.String())
		v := getJSON[verificationResponse](t, e, "/admin/api/verifications/"+f.verA)
		if v.Verification.Status != "approved" || v.Verification.Attempts != 1 || v.Verification.ClosedAt == nil {
			t.Errorf("verification: got %+v, want approved after one wrong guess", v.Verification)
		}
		if got := ids(v.Sends); !slices.Equal(got, []string{f.sendA}) {
			t.Errorf("sends: got %v, want %v", got, []string{f.sendA})
		}
		var outcomes []string
		for _, a := range v.Attempts {
			outcomes = append(outcomes, a.Outcome)
		}
		if want := []string{"invalid_code", "approved"}; !slices.Equal(outcomes, want) {
			t.Errorf("attempts: got %v, want %v", outcomes, want)
		}
	})
}

// assertNoCodeHash fails when body shows the seeded code hash in any usual encoding.
func assertNoCodeHash(t *testing.T, body string) {
	t.Helper()
	for _, enc := range []string{testCodeHash, hex.EncodeToString([]byte(testCodeHash)),
		base64.StdEncoding.EncodeToString([]byte(testCodeHash)), "code_hash", "CodeHash"} {
		if strings.Contains(body, enc) {
			t.Errorf("response shows the code hash (%q)", enc)
		}
	}
}

func TestAdminAPIBadParameters(t *testing.T) {
	e := newAdminEnv(t, nil)
	for _, tc := range []struct {
		name, target, param string
	}{
		{"PhoneNotANumber", "/admin/api/sends?phone=call-me", "phone"},
		{"PhoneInvalid", "/admin/api/sends?phone=%2B8112", "phone"},
		{"IPNotAnAddress", "/admin/api/sends?ip=localhost", "ip"},
		{"IPv6NetworkTooWide", "/admin/api/sends?ip=" + url.QueryEscape("2001:db8::/32"), "ip"},
		{"StatusUnknown", "/admin/api/sends?status=delivered", "status"},
		{"FromNotATime", "/admin/api/sends?from=yesterday", "from"},
		{"ToBeforeFrom", "/admin/api/sends?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z", "to"},
		{"LimitZero", "/admin/api/sends?limit=0", "limit"},
		{"LimitAboveMax", "/admin/api/sends?limit=201", "limit"},
		{"LimitNotANumber", "/admin/api/sends?limit=ten", "limit"},
		{"CursorMalformed", "/admin/api/sends?cursor=%21%21", "cursor"},
		{"CursorNotOurs", "/admin/api/sends?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("1.x")), "cursor"},
		{"StatsSinceMalformed", "/admin/api/stats?since=last-week", "since"},
		{"StatsSinceTooLongAgo", "/admin/api/stats?since=3650d&bucket=1m", "since"},
		{"StatsSinceInTheFuture", "/admin/api/stats?since=2999-01-01T00:00:00Z", "since"},
		{"StatsBucketMalformed", "/admin/api/stats?bucket=hourly", "bucket"},
		{"StatsBucketTooShort", "/admin/api/stats?bucket=1s", "bucket"},
		{"LimitsWithoutTarget", "/admin/api/limits", "phone"},
		{"LimitsWithBothTargets", "/admin/api/limits?phone=09012345678&ip=192.0.2.1", "ip"},
		{"LimitsWithBadPhone", "/admin/api/limits?phone=12", "phone"},
		{"LimitsWithBadIP", "/admin/api/limits?ip=300.1.1.1", "ip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(t, http.MethodGet, tc.target, bearer(testAdminToken), nil)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("got %d, want 400; body %s", w.Code, w.Body)
			}
			p := decodeProblem(t, w)
			if p.Code != "invalid_request" || p.Errors[tc.param] == "" {
				t.Errorf("got code %q errors %v, want invalid_request naming %q", p.Code, p.Errors, tc.param)
			}
		})
	}
}

func TestAdminAPIPaginationUnderConcurrentInserts(t *testing.T) {
	e := newAdminEnv(t, nil)
	// 150 older sends, three to a timestamp, so the id breaks ties inside a page.
	var seeded []otp.DeniedSend
	for i := range 150 {
		seeded = append(seeded, otp.DeniedSend{
			ID: uuid.Must(uuid.NewV7()).String(), Phone: fmt.Sprintf("+8190%08d", i%7), ClientIP: ipA,
			Status: otp.SendBlocked, Reason: "ip 10/1h", Time: e.base.Add(time.Duration(i/3) * time.Second),
		})
	}
	e.seedDenied(seeded...)

	// Newer sends keep arriving while the client pages through; the client waits for
	// at least one between two pages, so every page boundary sees an insert.
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg       sync.WaitGroup
		inserted atomic.Int64
	)
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			_, err := e.store.BeginSend(ctx, otp.BeginSend{
				Phone: fmt.Sprintf("+8180%08d", i), Channel: "sms", Locale: "en", ClientIP: ipB, Now: time.Now().UTC(),
				TTL: time.Minute, MaxSends: 5, MaxAttempts: 5, CodeHash: func(string) []byte { return []byte(testCodeHash) },
				NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(),
			})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("BeginSend: %v", err)
				}
				return
			}
			inserted.Add(1)
		}
	})
	defer func() {
		cancel()
		wg.Wait()
	}()

	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		before := inserted.Load()
		page := getJSON[sendsPage](t, e, "/admin/api/sends?limit=7&cursor="+url.QueryEscape(cursor))
		pages++
		for _, s := range page.Sends {
			seen[s.ID]++
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		if pages > 1000 {
			t.Fatal("paging did not end")
		}
		for deadline := time.Now().Add(10 * time.Second); inserted.Load() == before; {
			if time.Now().After(deadline) {
				t.Fatal("no insert between two pages in 10s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("%d pages, %d rows seen, %d rows inserted meanwhile", pages, len(seen), inserted.Load())
	if inserted.Load() < int64(pages-1) {
		t.Errorf("got %d inserts while paging, want at least one between any two of the %d pages", inserted.Load(), pages)
	}

	for id, n := range seen {
		if n > 1 {
			t.Errorf("row %s seen %d times, want once", id, n)
		}
	}
	for _, d := range seeded {
		if seen[d.ID] != 1 {
			t.Errorf("pre-existing row %s seen %d times, want once", d.ID, seen[d.ID])
		}
	}
}

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

// limitsBody is the JSON of /admin/api/limits as a client reads it.
type limitsBody struct {
	Target string       `json:"target"`
	Rules  []adminLimit `json:"rules"`
}

func (b limitsBody) rule(scope, rule string) adminLimit {
	for _, r := range b.Rules {
		if r.Scope == scope && r.Rule == rule {
			return r
		}
	}
	return adminLimit{Scope: "missing"}
}

func TestAdminAPILimits(t *testing.T) {
	e := newAdminEnv(t, nil)
	ctx := context.Background()
	spend := func(t *testing.T, limits ...otp.Limit) {
		t.Helper()
		d, err := e.limiter.Allow(ctx, limits)
		if err != nil || !d.Allowed {
			t.Fatalf("Allow: got %v, %v, want allowed", d.Allowed, err)
		}
	}
	rules := map[string][]otp.Rule{}
	for _, l := range testRules() {
		rules[l.Scope] = l.Rules
	}
	spend(t, otp.Limit{Scope: otp.ScopePhone, Key: phoneA, Rules: rules[otp.ScopePhone]})
	spend(t, otp.Limit{Scope: otp.ScopeCheckPhone, Key: phoneA, Rules: rules[otp.ScopeCheckPhone]})
	spend(t, otp.Limit{Scope: otp.ScopeCheckPhone, Key: phoneA, Rules: rules[otp.ScopeCheckPhone]})

	t.Run("StatePerRule", func(t *testing.T) {
		b := getJSON[limitsBody](t, e, "/admin/api/limits?phone=090-1234-5678")
		if b.Target != "phone:"+phoneA || len(b.Rules) != 3 {
			t.Fatalf("got target %q with %d rules, want phone:%s with 3", b.Target, len(b.Rules), phoneA)
		}
		minute := b.rule("phone", "1/1m")
		if minute.Used != 1 || minute.Limit != 1 || minute.Remaining != 0 || minute.WindowSeconds != 60 ||
			minute.RetryAfterSeconds < 1 || minute.RetryAfterSeconds > 60 || minute.ResetAfterSeconds < 1 {
			t.Errorf("phone 1/1m: got %+v, want used 1 of 1, retry within a minute", minute)
		}
		if hour := b.rule("phone", "10/1h"); hour.Used != 1 || hour.Remaining != 9 || hour.RetryAfterSeconds != 0 {
			t.Errorf("phone 10/1h: got %+v, want used 1, 9 remaining, no wait", hour)
		}
		if check := b.rule("check_phone", "10/1h"); check.Used != 2 || check.Remaining != 8 {
			t.Errorf("check_phone 10/1h: got %+v, want used 2, 8 remaining", check)
		}
	})

	t.Run("BasicDeleteWithoutCSRFTokenIsRefused", func(t *testing.T) {
		w := e.call(t, http.MethodDelete, "/admin/api/limits?phone=09012345678", basic("support", testAdminToken), nil)
		if w.Code != http.StatusForbidden {
			t.Fatalf("got %d, want 403; body %s", w.Code, w.Body)
		}
		if p := decodeProblem(t, w); p.Code != "csrf_failed" {
			t.Errorf("code: got %v, want csrf_failed", p.Code)
		}
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?phone=09012345678"); b.rule("phone", "1/1m").Used != 1 {
			t.Errorf("used after refused reset: got %d, want 1", b.rule("phone", "1/1m").Used)
		}
		if actions, _ := e.store.AdminActions(ctx, 0); len(actions) != 0 {
			t.Errorf("admin actions after refused reset: got %d, want 0", len(actions))
		}
	})

	t.Run("BearerDeleteResetsAndIsAudited", func(t *testing.T) {
		w := e.call(t, http.MethodDelete, "/admin/api/limits?phone="+url.QueryEscape(phoneA), bearer(testAdminToken), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
		}
		for _, r := range getJSON[limitsBody](t, e, "/admin/api/limits?phone="+url.QueryEscape(phoneA)).Rules {
			if r.Used != 0 || r.Remaining != r.Limit {
				t.Errorf("%s %s after reset: got used %d remaining %d, want 0 and %d", r.Scope, r.Rule, r.Used, r.Remaining, r.Limit)
			}
		}
		states, err := e.limiter.Inspect(ctx, otp.Limit{Scope: otp.ScopePhone, Key: phoneA, Rules: rules[otp.ScopePhone]})
		if err != nil || states[0].Used != 0 {
			t.Errorf("limiter after reset: got %+v, %v, want nothing used", states, err)
		}
		actions, err := e.store.AdminActions(ctx, 0)
		if err != nil || len(actions) != 1 {
			t.Fatalf("admin actions: got %v, %v, want one", actions, err)
		}
		if a := actions[0]; a.Action != "limit_reset" || a.Target != "phone:"+phoneA || !strings.Contains(a.Detail, "api token") {
			t.Errorf("admin action: got %+v, want limit_reset of phone:%s by the api token", a, phoneA)
		}
	})

	t.Run("BasicDeleteWithCSRFTokenResets", func(t *testing.T) {
		spend(t, otp.Limit{Scope: otp.ScopeIP, Key: "2001:db8:7:7::/64", Rules: rules[otp.ScopeIP]})
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?ip=2001:db8:7:7:1:2:3:4"); b.Target != "ip:2001:db8:7:7::/64" || b.rule("ip", "10/1h").Used != 1 {
			t.Fatalf("IPv6 lookup: got %+v, want its /64 with one use", b)
		}
		cookie, token := e.csrfSession(t)
		w := e.call(t, http.MethodDelete, "/admin/api/limits?ip=2001:db8:7:7::9", basic("support", testAdminToken),
			map[string]string{"Cookie": cookie.Name + "=" + cookie.Value, csrfHeader: token})
		if w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200; body %s", w.Code, w.Body)
		}
		if b := getJSON[limitsBody](t, e, "/admin/api/limits?ip=2001:db8:7:7::1"); b.rule("ip", "10/1h").Used != 0 {
			t.Errorf("used after reset: got %d, want 0", b.rule("ip", "10/1h").Used)
		}
		actions, _ := e.store.AdminActions(ctx, 1)
		if len(actions) != 1 || actions[0].Target != "ip:2001:db8:7:7::/64" || !strings.Contains(actions[0].Detail, `console user "support"`) {
			t.Errorf("newest admin action: got %+v, want the IP reset by support", actions)
		}
	})
}
