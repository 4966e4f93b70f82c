package http

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

func TestReceiptRefusals(t *testing.T) {
	t.Run("AnUnknownInstanceIsNamedAsSuch", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = &stubReceipts{err: fmt.Errorf("otp: receipt: %w", otp.ErrNotFound)} })
		for _, path := range []string{"/v1/receipts/webhook/nosuch", "/v1/receipts/twilio/Not-A-Name"} {
			w := post(t, h, path, `{"id":"x","status":"delivered"}`, map[string]string{"Otpgate-Signature": "t=1,v1=00"})
			p := decodeProblem(t, w)
			if w.Code != http.StatusNotFound || p.Code != "not_found" || !strings.Contains(p.Detail, "no such provider instance") {
				t.Errorf("%s: got %d %s %q, want 404 not_found saying there is no such provider instance", path, w.Code, p.Code, p.Detail)
			}
		}
	})

	t.Run("ForgedCallbacksAreLoggedOncePerInterval", func(t *testing.T) {
		h, logs := newTestServer(t, &stubVerifier{}, func(d *Deps) { d.Receipts = &stubReceipts{err: fmt.Errorf("sms: %w", receipt.ErrBadSignature)} })
		for range 5 {
			w := post(t, h, "/v1/receipts/webhook/backup", `{"id":"x","status":"delivered"}`, map[string]string{"Otpgate-Signature": "t=1,v1=00"})
			if w.Code != http.StatusForbidden {
				t.Fatalf("got %d, want 403", w.Code)
			}
		}
		if n := strings.Count(logs.String(), "bad signature"); n != 1 {
			t.Errorf("got %d warnings for 5 forged callbacks, want 1:\n%s", n, logs.String())
		}
	})
}

func TestLogLimiter(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	l := newLogLimiter(time.Minute)
	l.now = func() time.Time { return now }
	step := func(d time.Duration, wantOK bool, wantHeld int) {
		t.Helper()
		now = now.Add(d)
		if ok, held := l.allow(); ok != wantOK || held != wantHeld {
			t.Errorf("at +%s: got %v %d, want %v %d", d, ok, held, wantOK, wantHeld)
		}
	}
	step(0, true, 0)
	step(time.Second, false, 0)
	step(58*time.Second, false, 0)
	step(time.Second, true, 2) // a minute after the first: the two held back are told
	step(time.Hour, true, 0)
}
