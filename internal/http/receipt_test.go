package http

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// stubReceipts answers Receive as told and records what it got.
type stubReceipts struct {
	mu   sync.Mutex
	err  error
	got  []string
	body []string
	sig  []string
}

func (s *stubReceipts) Receive(_ context.Context, source string, c receipt.Callback) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, source)
	s.body = append(s.body, string(c.Body))
	s.sig = append(s.sig, c.Header.Get("X-Twilio-Signature")+c.Header.Get("Otpgate-Signature"))
	return s.err
}

func TestReceiptRoute(t *testing.T) {
	form := func(t *testing.T, h http.Handler, path, body string, header map[string]string) int {
		t.Helper()
		hd := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		for k, v := range header {
			hd[k] = v
		}
		return do(t, h, request{method: http.MethodPost, path: path, body: body, header: hd}).Code
	}

	t.Run("GenuineCallbackIs204AndReachesItsSource", func(t *testing.T) {
		rs := &stubReceipts{}
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = rs })
		st := form(t, h, "/v1/receipts/twilio/jp", "MessageSid=SM1&MessageStatus=delivered", map[string]string{"X-Twilio-Signature": "c2ln"})
		if st != http.StatusNoContent || len(rs.got) != 1 || rs.got[0] != "twilio/jp" ||
			rs.body[0] != "MessageSid=SM1&MessageStatus=delivered" || rs.sig[0] != "c2ln" {
			t.Errorf("got %d, %v %v %v, want 204 and the callback of twilio/jp as posted", st, rs.got, rs.body, rs.sig)
		}
	})

	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"ForgedIs403", fmt.Errorf("sms: %w", receipt.ErrBadSignature), http.StatusForbidden, "invalid_signature"},
		{"MalformedIs400", &otp.ErrInvalidRequest{Detail: "bad receipt: id is required"}, http.StatusBadRequest, "invalid_request"},
		{"UnknownInstanceIs404", fmt.Errorf("otp: receipt: %w", otp.ErrNotFound), http.StatusNotFound, "not_found"},
		{"StoreDownIs503", fmt.Errorf("postgres: %w", otp.ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = &stubReceipts{err: c.err} })
			w := post(t, h, "/v1/receipts/webhook/backup", `{"id":"x","status":"delivered"}`, map[string]string{"Otpgate-Signature": "t=1,v1=00"})
			p := decodeProblem(t, w)
			if w.Code != c.status || p.Code != c.code {
				t.Errorf("got %d %s, want %d %s", w.Code, p.Code, c.status, c.code)
			}
		})
	}

	t.Run("WithoutReceiversEveryCallbackIs404", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, nil)
		if st := form(t, h, "/v1/receipts/twilio/twilio", "MessageSid=SM1", nil); st != http.StatusNotFound {
			t.Errorf("got %d, want 404", st)
		}
	})

	t.Run("OnlyPOST", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = &stubReceipts{} })
		w := do(t, h, request{method: http.MethodGet, path: "/v1/receipts/twilio/twilio"})
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
			t.Errorf("got %d Allow %q, want 405 Allow POST", w.Code, w.Header().Get("Allow"))
		}
	})

	t.Run("BodyOverTheLimitIs413", func(t *testing.T) {
		rs := &stubReceipts{}
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = rs })
		st := form(t, h, "/v1/receipts/twilio/twilio", "x="+strings.Repeat("a", maxBodyBytes), nil)
		if st != http.StatusRequestEntityTooLarge || len(rs.got) != 0 {
			t.Errorf("got %d and %d calls, want 413 and none", st, len(rs.got))
		}
	})
}

func TestSendAndCheckByEmail(t *testing.T) {
	v := &stubVerifier{
		send: func(_ context.Context, in otp.SendInput) (otp.SendResult, error) {
			if in.Email == "bad" {
				return otp.SendResult{}, &contact.ErrInvalidEmail{Reason: "has no @"}
			}
			res := pendingResult(true)
			res.Verification.Address, res.Verification.Channel = "ana@example.com", otp.ChannelEmail
			return res, nil
		},
		check: func(_ context.Context, in otp.CheckInput) (otp.CheckResult, error) {
			return otp.CheckResult{Verification: otp.Verification{ID: testID, Address: "ana@example.com", Status: otp.StatusApproved}}, nil
		},
	}
	h, _ := newTestServer(t, v, nil)

	w := post(t, h, "/v1/verifications", `{"email":"Ana@Example.com","locale":"de"}`, nil)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"email":"ana@example.com"`) || strings.Contains(w.Body.String(), `"phone"`) {
		t.Errorf("send: got %d %s, want 201 with email and no phone", w.Code, w.Body)
	}
	if len(v.sends) != 1 || v.sends[0].Email != "Ana@Example.com" || v.sends[0].Locale != "de" || v.sends[0].Phone != "" {
		t.Errorf("service got %+v, want the email as given", v.sends)
	}
	w = post(t, h, "/v1/verifications", `{"email":"bad"}`, nil)
	if p := decodeProblem(t, w); w.Code != http.StatusUnprocessableEntity || p.Code != "invalid_email" || p.Detail != "has no @" {
		t.Errorf("bad address: got %d %+v, want 422 invalid_email saying why", w.Code, p)
	}
	w = post(t, h, "/v1/verifications/check", `{"email":"ana@example.com","code":"123456"}`, nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"email":"ana@example.com"`) || len(v.checks) != 1 || v.checks[0].Email != "ana@example.com" {
		t.Errorf("check: got %d %s (service got %+v), want 200 with the address", w.Code, w.Body, v.checks)
	}
}
