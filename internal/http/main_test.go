package http

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"otpgate/internal/testenv/fixture"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/apitest"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stubVerifier is an in-test Verifier for checks of the HTTP shape only; the service's
// behaviour is tested end to end elsewhere, through real Redis and PostgreSQL.
type stubVerifier struct {
	send  func(ctx context.Context, in otp.SendInput) (otp.SendResult, error)
	check func(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error)
	state func(ctx context.Context, ip string) (rate.Decision, error)

	mu     sync.Mutex
	sends  []otp.SendInput
	checks []otp.CheckInput
	states []string
}

func (s *stubVerifier) Send(ctx context.Context, in otp.SendInput) (otp.SendResult, error) {
	s.mu.Lock()
	s.sends = append(s.sends, in)
	s.mu.Unlock()
	if s.send == nil {
		return pendingResult(true), nil
	}
	return s.send(ctx, in)
}

func (s *stubVerifier) Check(ctx context.Context, in otp.CheckInput) (otp.CheckResult, error) {
	s.mu.Lock()
	s.checks = append(s.checks, in)
	s.mu.Unlock()
	if s.check == nil {
		return otp.CheckResult{Verification: otp.Verification{ID: testID, Address: testPhone, Status: otp.StatusApproved}}, nil
	}
	return s.check(ctx, in)
}

func (s *stubVerifier) SendLimitState(ctx context.Context, ip string) (rate.Decision, error) {
	s.mu.Lock()
	s.states = append(s.states, ip)
	s.mu.Unlock()
	if s.state == nil {
		return ipState(), nil
	}
	return s.state(ctx, ip)
}

func (s *stubVerifier) sendCalls() []otp.SendInput {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]otp.SendInput(nil), s.sends...)
}

const (
	testID    = "0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60"
	testPhone = "+819012345678"
)

// testNow is a fixed instant for results, so response bodies can be compared exactly.
var testNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// pendingResult is an allowed send whose closest rule is phone 1/1m.
func pendingResult(created bool) otp.SendResult {
	return otp.SendResult{
		Verification: otp.Verification{
			ID: testID, Address: testPhone, Channel: "sms", Status: otp.StatusPending,
			ExpiresAt: testNow.Add(5 * time.Minute),
		},
		Created:      created,
		NextResendAt: testNow.Add(time.Minute),
		SendsLeft:    4,
		Decision: rate.Decision{Allowed: true, Rules: []rate.RuleState{
			{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}, Used: 1, Remaining: 0, ResetAfter: time.Minute, RetryAfter: time.Minute},
			{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 1, Remaining: 9, ResetAfter: time.Hour},
		}},
	}
}

// refusingService is the real otp service for requests it refuses before any I/O, such as
// invalid fields: it has no store, limiter or sender, so a request it would accept fails.
func refusingService(codeLength int) *otp.Service {
	return otp.NewService(otp.Config{CodeLength: codeLength}, nil, nil, nil, nil, nil, discardLogger())
}

// ipState is what SendLimitState reports when nothing was spent yet.
func ipState() rate.Decision {
	return rate.Decision{Allowed: true, Rules: []rate.RuleState{
		{Scope: "ip", Rule: rate.Rule{Limit: 10, Window: time.Hour}, Used: 3, Remaining: 7, ResetAfter: 30*time.Minute + 500*time.Millisecond},
	}}
}

// newTestServer builds the public handler around v, logging into the returned buffer.
// Every exchange it serves is checked against the public OpenAPI document.
func newTestServer(t *testing.T, v otp.Verifier, mod func(*Deps)) (http.Handler, *fixture.SyncBuffer) {
	t.Helper()
	logs := &fixture.SyncBuffer{}
	d := Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil)), Verifier: v}
	if mod != nil {
		mod(&d)
	}
	return apitest.Handler(t, apitest.Public(), NewServer(d)), logs
}

// request is one call to the handler under test.
type request struct {
	method, path, body string
	header             map[string]string
}

// do serves req in memory, as JSON unless the request says otherwise.
func do(t *testing.T, h http.Handler, req request) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	r := httptest.NewRequest(req.method, req.path, body)
	if req.method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// post is do for a JSON POST.
func post(t *testing.T, h http.Handler, path, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, request{method: http.MethodPost, path: path, body: body, header: header})
}

// serve runs one prepared request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// problemBody is a problem+json response as a client reads it.
type problemBody struct {
	Type              string              `json:"type"`
	Title             string              `json:"title"`
	Status            int                 `json:"status"`
	Detail            string              `json:"detail"`
	Code              string              `json:"code"`
	Errors            map[string]string   `json:"errors"`
	AttemptsLeft      *int                `json:"attempts_left"`
	RetryAfterSeconds *int64              `json:"retry_after_seconds"`
	Violations        []httpkit.Violation `json:"violations"`
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
