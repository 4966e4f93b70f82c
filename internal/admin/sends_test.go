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
