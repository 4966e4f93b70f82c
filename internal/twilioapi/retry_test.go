package twilioapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

const retryApp = "01900000-0000-7000-8000-0000000000ff"

// refusing answers every send and check with one error and result.
type refusing struct {
	err   error
	send  otp.SendResult
	check otp.CheckResult
}

func (f refusing) Send(context.Context, otp.SendInput) (otp.SendResult, error) { return f.send, f.err }
func (f refusing) Check(context.Context, otp.CheckInput) (otp.CheckResult, error) {
	return f.check, f.err
}
func (f refusing) SendLimitState(context.Context, string) (rate.Decision, error) {
	return rate.Decision{}, nil
}
func (f refusing) Verification(context.Context, *otp.App, string) (otp.Verification, error) {
	return otp.Verification{}, otp.ErrNotFound
}
func (f refusing) Close(context.Context, *otp.App, string, otp.Status) (otp.Verification, error) {
	return otp.Verification{}, otp.ErrNotFound
}
func (f refusing) App(context.Context, string) (otp.App, error) {
	return otp.App{ID: retryApp, Access: otp.AccessKey, CodeTTL: 5 * time.Minute}, nil
}
func (f refusing) Authenticate(context.Context, string, string) (apps.Key, error) {
	return apps.Key{ID: "SK1", AppID: retryApp}, nil
}

func TestRetryAfterOnEveryRateLimitAnswer(t *testing.T) {
	violated := func(scope string, after time.Duration) rate.Decision {
		return rate.Decision{Rules: []rate.RuleState{{Scope: scope, Rule: rate.Rule{Limit: 1, Window: time.Hour}, RetryAfter: after, Violated: true}}}
	}
	for _, tc := range []struct {
		name, path string
		f          refusing
		code       int
		want       string
	}{
		{"RateLimited", "/Verifications", refusing{err: &otp.ErrRateLimited{Decision: violated("phone", 41500*time.Millisecond)}}, 20429, "42"},
		{"DuplicateSubmit", "/Verifications", refusing{err: otp.ErrDuplicateSubmit, send: otp.SendResult{Decision: violated(otp.ScopeDuplicate, 3*time.Second)}}, 20429, "3"},
		{"BudgetExceeded", "/Verifications", refusing{err: fmt.Errorf("otp: send: %w", &otp.ErrBudgetExceeded{Budget: "cap", Period: "day", RetryAfter: 90*time.Minute + time.Millisecond})}, 20429, "5401"},
		{"SendsSpent", "/Verifications", refusing{err: &otp.ErrRateLimited{Decision: violated(otp.ScopeVerification, 4*time.Minute)}}, 60203, "240"},
		{"CheckRateLimited", "/VerificationCheck", refusing{err: &otp.ErrRateLimited{Decision: violated("check_ip", 7*time.Second)}}, 20429, "7"},
		{"WrongGuessesSpent", "/VerificationCheck", refusing{err: otp.ErrTooManyAttempts,
			check: otp.CheckResult{Verification: otp.Verification{ExpiresAt: time.Now().Add(90 * time.Second)}}}, 60202, "90"},
		{"NotARateLimit", "/Verifications", refusing{err: otp.ErrUnavailable}, 20503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandler(Deps{Verifier: tc.f, Manager: tc.f, Apps: tc.f,
				ClientIP: func(*http.Request, apps.Key) (string, error) { return "192.0.2.1", nil }})
			form := url.Values{"To": {"+15551234567"}, "Code": {"123456"}}
			r := httptest.NewRequest(http.MethodPost, "/Services/"+apps.ServiceSID(retryApp)+tc.path, strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.SetBasicAuth("SK1", "secret")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var body restError
			_ = json.NewDecoder(w.Body).Decode(&body)
			if got := w.Header().Get("Retry-After"); body.Code != tc.code || got != tc.want {
				t.Errorf("got %d with Retry-After %q, want %d with %q", body.Code, got, tc.code, tc.want)
			}
		})
	}
}

// TestAFenceRefusalNamesTheCountryAndItsShare: a 20429 that a budget's fence answered
// carries the country and its share beside code and message, as the native API's problem
// does (docs/spend.md); one the cap answered carries neither.
func TestAFenceRefusalNamesTheCountryAndItsShare(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		err                  *otp.ErrBudgetExceeded
		wantCountry, wantShr string
	}{
		{"Fence", &otp.ErrBudgetExceeded{Budget: "cap", Period: "day", RetryAfter: time.Hour, Country: "UZ", Young: true, Share: 1_000_000}, "UZ", "1.00"},
		{"Cap", &otp.ErrBudgetExceeded{Budget: "cap", Period: "day", RetryAfter: time.Hour}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := refusing{err: fmt.Errorf("otp: send: %w", tc.err)}
			h := NewHandler(Deps{Verifier: f, Manager: f, Apps: f,
				ClientIP: func(*http.Request, apps.Key) (string, error) { return "192.0.2.1", nil }})
			form := url.Values{"To": {"+998901234567"}, "Channel": {"sms"}}
			r := httptest.NewRequest(http.MethodPost, "/Services/"+apps.ServiceSID(retryApp)+"/Verifications", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.SetBasicAuth("SK1", "secret")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var body restError
			if err := json.NewDecoder(w.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if w.Code != http.StatusTooManyRequests || body.Code != 20429 || body.Country != tc.wantCountry || body.Share != tc.wantShr {
				t.Errorf("got %d %+v, want 429 20429 with country %q share %q", w.Code, body, tc.wantCountry, tc.wantShr)
			}
			if tc.wantCountry != "" && !strings.Contains(body.Message, "UZ has spent its share 1.00") {
				t.Errorf("message: got %q, want the country's share named", body.Message)
			}
		})
	}
}
