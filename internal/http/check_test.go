package http

import (
	"context"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestCheck(t *testing.T) {
	t.Run("ApprovedIs200", func(t *testing.T) {
		v := &stubVerifier{}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications/check", `{"id":"`+testID+`","code":"123456"}`, nil)
		if w.Code != 200 {
			t.Fatalf("status: got %v, want %v (%s)", w.Code, 200, w.Body)
		}
		want := `{"id":"` + testID + `","phone":"+819012345678","status":"approved"}` + "\n"
		if w.Body.String() != want {
			t.Errorf("body: got %s, want %s", w.Body, want)
		}
		if in := v.checks[0]; in.ID != testID || in.Code != "123456" || in.Phone != "" || in.ClientIP != "192.0.2.1" {
			t.Errorf("service input: got %+v", in)
		}
	})
	t.Run("CodeLengthIsTheServices", func(t *testing.T) {
		h, _ := newTestServer(t, refusingService(8), nil)
		w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, nil)
		p := decodeProblem(t, w)
		want := map[string]string{"code": "must be 8 digits"}
		if w.Code != 400 || p.Code != "invalid_request" || !reflect.DeepEqual(p.Errors, want) {
			t.Errorf("got %v %v %v, want 400 invalid_request %v", w.Code, p.Code, p.Errors, want)
		}
	})
	t.Run("InvalidFieldsAre400", func(t *testing.T) {
		h, _ := newTestServer(t, refusingService(6), nil)
		w := post(t, h, "/v1/verifications/check", `{"phone":"1","id":"`+testID+`","code":"12"}`, nil)
		p := decodeProblem(t, w)
		want := map[string]string{"id": `give one of "phone", "email" or "id", not several`, "code": "must be 6 digits"}
		if w.Code != 400 || p.Code != "invalid_request" || !reflect.DeepEqual(p.Errors, want) {
			t.Errorf("got %v %v %v, want 400 invalid_request %v", w.Code, p.Code, p.Errors, want)
		}
		if w.Header().Get("RateLimit") != "" {
			t.Errorf("RateLimit: got %q, want none (the limiter was not asked)", w.Header().Get("RateLimit"))
		}
	})
	t.Run("InvalidCodeHasAttemptsLeft", func(t *testing.T) {
		v := &stubVerifier{check: func(context.Context, otp.CheckInput) (otp.CheckResult, error) {
			return otp.CheckResult{}, &otp.ErrInvalidCode{AttemptsLeft: 3}
		}}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, nil)
		p := decodeProblem(t, w)
		if w.Code != 422 || p.Code != "invalid_code" || p.AttemptsLeft == nil || *p.AttemptsLeft != 3 {
			t.Errorf("got %v %v %v, want 422 invalid_code with attempts_left 3", w.Code, p.Code, p.AttemptsLeft)
		}
	})
	t.Run("RateLimitedHasHeaders", func(t *testing.T) {
		d := rate.Decision{Rules: []rate.RuleState{{Scope: "check_ip", Rule: rate.Rule{Limit: 100, Window: time.Hour}, Used: 100, RetryAfter: 10 * time.Second, ResetAfter: 10 * time.Second, Violated: true}}}
		v := &stubVerifier{check: func(context.Context, otp.CheckInput) (otp.CheckResult, error) {
			return otp.CheckResult{Decision: d}, &otp.ErrRateLimited{Decision: d}
		}}
		h, _ := newTestServer(t, v, nil)
		w := post(t, h, "/v1/verifications/check", `{"phone":"1","code":"123456"}`, nil)
		if w.Code != 429 || w.Header().Get("Retry-After") != "10" || w.Header().Get("RateLimit") != `"check_ip-1h";r=0;t=10` {
			t.Errorf("got %v, Retry-After %q, RateLimit %q; want 429, 10, the check_ip rule", w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
		}
	})
}
