package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/apitest"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/ratelimit"
	"otpgate/internal/testenv"
	testfixture "otpgate/internal/testenv/fixture"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const testAdminToken = "admin-token-0123456789abcdef"

// testCodeHash is stored for every seeded send; no admin response may show it.
const testCodeHash = "code-hash-that-must-never-show-0123456789"

// adminEnv is the admin handler over the in-memory store and a limiter on a miniredis of
// the test, as dev mode runs them: what these tests check (authentication, validation,
// rendering, the API's shapes) does not depend on the store, whose shared behaviour
// internal/storetest holds both stores to. Its seed methods fail the test that created
// it, so they belong to that test's goroutine.
type adminEnv struct {
	t       *testing.T
	h       http.Handler
	store   *inmem.Store
	limiter *ratelimit.Limiter
	logs    *testfixture.SyncBuffer
	// base is the time of the first seeded send, two hours ago.
	base time.Time
}

// testRules are the limits the admin handler is told about.
func testRules() []rate.Limit {
	return []rate.Limit{
		{Scope: otp.ScopePhone, Rules: []rate.Rule{{Limit: 1, Window: time.Minute}, {Limit: 10, Window: time.Hour}}},
		{Scope: otp.ScopeIP, Rules: []rate.Rule{{Limit: 10, Window: time.Hour}}},
		{Scope: otp.ScopeCheckPhone, Rules: []rate.Rule{{Limit: 10, Window: time.Hour}}},
		{Scope: otp.ScopeCheckIP, Rules: []rate.Rule{{Limit: 100, Window: time.Hour}}},
	}
}

func newAdminEnv(t *testing.T, mod func(*Deps)) *adminEnv {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	e := &adminEnv{
		t: t, store: inmem.New(), limiter: ratelimit.New(rdb, testenv.KeyPrefix(t)),
		logs: &testfixture.SyncBuffer{}, base: time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second),
	}
	d := Deps{
		Logger: slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Admin:  history.NewAdmin(e.store, e.limiter, testRules()), Token: testAdminToken, DefaultRegion: "JP",
		Erasure: history.NewEraser(e.store, e.limiter, func(a string) string { return "h1.idx-" + strconv.Itoa(len(a)) },
			func(a string) []rate.Limit { return []rate.Limit{{Scope: otp.ScopePhone, Key: a}} }),
	}
	if mod != nil {
		mod(&d)
	}
	// Every exchange of the admin API is checked against its OpenAPI document.
	e.h = apitest.Handler(t, apitest.Admin(), NewServer(d))
	return e
}

// seedSend begins a send for phone from ip at at and finishes it with status
// (sent or failed); it returns the send's and its verification's ids.
func (e *adminEnv) seedSend(phone, ip string, at time.Time, status otp.SendStatus) (sendID, verificationID string) {
	e.t.Helper()
	ctx := context.Background()
	sendID, vid := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	start, err := e.store.BeginSend(ctx, otp.BeginSend{
		Phone: phone, Channel: "sms", Locale: "en", ClientIP: ip, Provider: "webhook", Now: at,
		TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, NewVerificationID: vid, SendID: sendID,
		CodeHash: func(string) []byte { return []byte(testCodeHash) },
	})
	if err != nil {
		e.t.Fatalf("BeginSend: %v", err)
	}
	fin := otp.FinishSend{SendID: sendID, VerificationID: start.Verification.ID, Status: status, Now: at, Created: start.Created}
	if status == otp.SendSent {
		fin.ProviderID = "msg-" + sendID[:8]
	} else {
		fin.Error = "provider refused: invalid destination"
	}
	if err := e.store.FinishSend(ctx, fin); err != nil {
		e.t.Fatalf("FinishSend: %v", err)
	}
	return sendID, start.Verification.ID
}

// seedCheck records one check of a verification with the given outcome.
func (e *adminEnv) seedCheck(vid, ip string, at time.Time, outcome otp.CheckOutcome) {
	e.t.Helper()
	_, _, err := e.store.Check(context.Background(), otp.CheckRef{ID: vid, ClientIP: ip, Now: at},
		func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
			if outcome == otp.OutcomeApproved {
				v.Status = otp.StatusApproved
			} else {
				v.Attempts++
			}
			return v, outcome
		})
	if err != nil {
		e.t.Fatalf("Check: %v", err)
	}
}

// seedDenied records refused sends as the send path does.
func (e *adminEnv) seedDenied(ds ...otp.DeniedSend) {
	e.t.Helper()
	for _, d := range ds {
		e.store.RecordDenied(d)
	}
	if n := e.store.Dropped(); n != 0 {
		e.t.Fatalf("store dropped %d refused sends", n)
	}
}

// Phones and IPs of the fixture.
const (
	phoneA = "+819012345678" // approved after one wrong guess; also blocked and duplicate
	phoneB = "+819098765432" // provider failure
	phoneC = "+818012345678" // sent, never checked: expired
	phoneD = "+817012345678" // sent from an IPv6 client
	ipA    = "192.0.2.10"
	ipB    = "198.51.100.7"
	ipV6   = "2001:db8:1:2::/64"
)

// fixture ids, for assertions.
type fixture struct {
	sendA, verA, sendB, sendC, sendD string
	blockedA, duplicateA             string
}

// seedFixture writes a small history of every status.
func (e *adminEnv) seedFixture() fixture {
	e.t.Helper()
	var f fixture
	b := e.base
	f.sendA, f.verA = e.seedSend(phoneA, ipA, b, otp.SendSent)
	e.seedCheck(f.verA, ipA, b.Add(10*time.Second), otp.OutcomeInvalidCode)
	e.seedCheck(f.verA, ipA, b.Add(20*time.Second), otp.OutcomeApproved)
	f.duplicateA, f.blockedA = uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	e.seedDenied(
		otp.DeniedSend{ID: f.duplicateA, Phone: phoneA, ClientIP: ipA, Status: otp.SendDuplicate, Reason: "duplicate 1/5s", Time: b.Add(3 * time.Second)},
		otp.DeniedSend{ID: f.blockedA, Phone: phoneA, ClientIP: "203.0.113.9", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: b.Add(30 * time.Second)},
	)
	f.sendB, _ = e.seedSend(phoneB, ipB, b.Add(time.Minute), otp.SendFailed)
	f.sendC, _ = e.seedSend(phoneC, ipB, b.Add(2*time.Minute), otp.SendSent)
	f.sendD, _ = e.seedSend(phoneD, ipV6, b.Add(3*time.Minute), otp.SendSent)
	return f
}

// call serves one admin request with the given Authorization (none when empty).
func (e *adminEnv) call(t *testing.T, method, target, auth string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if v, ok := header["body"]; ok {
		body = strings.NewReader(v)
	}
	r := httptest.NewRequest(method, target, body)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	for k, v := range header {
		if k != "body" {
			r.Header.Set(k, v)
		}
	}
	return serve(e.h, r)
}

func bearer(token string) string { return "Bearer " + token }

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// getJSON calls the API with the bearer token and decodes a 200 answer into T.
func getJSON[T any](t *testing.T, e *adminEnv, target string) T {
	t.Helper()
	w := e.call(t, http.MethodGet, target, bearer(testAdminToken), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: got %d, want 200; body %s", target, w.Code, w.Body)
	}
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return v
}

// csrfSession opens a console page as a browser would, with the break-glass login, and
// returns the CSRF cookie and token.
func (e *adminEnv) csrfSession(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	return e.csrfSessionAs(t, basic("support", testAdminToken))
}

// csrfSessionAs opens a console page with the login auth and returns the CSRF cookie and
// the token, which is bound to that login's person.
func (e *adminEnv) csrfSessionAs(t *testing.T, auth string) (*http.Cookie, string) {
	t.Helper()
	w := e.call(t, http.MethodGet, "/admin/limits", auth, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /admin/limits: got %d, want 200", w.Code)
	}
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == csrfCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no %s cookie set", csrfCookie)
	}
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("csrf cookie: got HttpOnly=%v SameSite=%v, want true and Strict", cookie.HttpOnly, cookie.SameSite)
	}
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no csrf-token meta in the page")
	}
	return cookie, m[1]
}

// serve runs one prepared request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// problemBody is a problem+json response as a client reads it.
type problemBody struct {
	Type   string            `json:"type"`
	Title  string            `json:"title"`
	Status int               `json:"status"`
	Detail string            `json:"detail"`
	Code   string            `json:"code"`
	Errors map[string]string `json:"errors"`
}

// decodeProblem reads a problem response, failing unless it is well-formed problem+json.
func decodeProblem(t *testing.T, w *httptest.ResponseRecorder) problemBody {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("content type: got %v, want %v", ct, "application/problem+json")
	}
	var p problemBody
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body %q: %v", w.Body, err)
	}
	if p.Status != w.Code {
		t.Errorf("problem status: got %v, want %v", p.Status, w.Code)
	}
	if p.Type != "urn:otpgate:problem:"+p.Code {
		t.Errorf("problem type: got %v, want %v", p.Type, "urn:otpgate:problem:"+p.Code)
	}
	if p.Title == "" || p.Detail == "" {
		t.Errorf("problem title and detail: got %q and %q, want both set", p.Title, p.Detail)
	}
	return p
}

// discardLogger is for tests that do not read the logs.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
