package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func TestSinchReceipt(t *testing.T) {
	ctx := context.Background()
	store := &receipts{}
	var s *sms.Sinch
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"sinch/sinch": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	f := smstest.NewSinch(t, sinchPlan)
	s = newSinch(t, f.URL, func(c *sms.SinchConfig) { c.Callback = cb.URL + "/v1/receipts/sinch/sinch" })
	send := func(t *testing.T) string {
		t.Helper()
		id, err := s.Send(ctx, message())
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		return id
	}

	t.Run("StepsAndUnknownChangeNothing", func(t *testing.T) {
		id := send(t)
		for _, status := range []string{"Queued", "Dispatched", "Unknown"} {
			if st, err := f.Report(ctx, id, status, 401); err != nil || st != http.StatusNoContent {
				t.Errorf("%s: got %d, %v, want 204", status, st, err)
			}
		}
		if _, ok := store.get("sinch/" + id + "/"); ok {
			t.Error("a step settled the send")
		}
	})

	t.Run("DeliveredIsRecorded", func(t *testing.T) {
		id := send(t)
		st, err := f.Report(ctx, id, "Delivered", 0)
		r, ok := store.get("sinch/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryDelivered || r.Time.IsZero() {
			t.Errorf("got %d, %v, %+v, want 204 and the send delivered", st, err, r)
		}
	})

	t.Run("FailedIsRecordedWithItsCode", func(t *testing.T) {
		id := send(t)
		st, err := f.Report(ctx, id, "Failed", 402)
		r, ok := store.get("sinch/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "402" {
			t.Errorf("got %d, %v, %+v, want 204 and undelivered with code 402", st, err, r)
		}
	})

	t.Run("ForgedOrStaleIsRefused", func(t *testing.T) {
		id := send(t)
		before := store.calls
		for name, edit := range map[string]func(body []byte, h http.Header) []byte{
			"Unsigned": func(b []byte, h http.Header) []byte { clear(h); return b },
			"WrongSecret": func(b []byte, h http.Header) []byte {
				h.Set(sms.SinchSignatureHeader, sms.SinchSignature("other", b, h.Get(sms.SinchNonceHeader), h.Get(sms.SinchTimestampHeader)))
				return b
			},
			"TamperedBody": func(b []byte, _ http.Header) []byte {
				return []byte(strings.Replace(string(b), "Failed", "Delivered", 1))
			},
			"OtherNonce": func(b []byte, h http.Header) []byte { h.Set(sms.SinchNonceHeader, "other"); return b },
			"Stale": func(b []byte, h http.Header) []byte {
				for k, v := range f.Sign(b, time.Now().Add(-6*time.Minute)) {
					h[k] = v
				}
				return b
			},
			"NoTimestamp":    func(b []byte, h http.Header) []byte { h.Del(sms.SinchTimestampHeader); return b },
			"OtherAlgorithm": func(b []byte, h http.Header) []byte { h.Set(sms.SinchAlgorithmHeader, "HmacSHA1"); return b },
			"NotBase64":      func(b []byte, h http.Header) []byte { h.Set(sms.SinchSignatureHeader, "not base64!"); return b },
		} {
			body, to, err := f.ReportBody(id, "Failed", 402)
			if err != nil {
				t.Fatal(err)
			}
			h := f.Sign(body, time.Now())
			body = edit(body, h)
			if st, err := f.PostReport(ctx, to, body, h); err != nil || st != http.StatusForbidden {
				t.Errorf("%s: got %d, %v, want 403", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by refused reports, want 0", store.calls-before)
		}
	})

	t.Run("SignedButMalformedIsBadRequest", func(t *testing.T) {
		before := store.calls
		for name, body := range map[string]string{
			"NotJSON":     `nope`,
			"NULInBatch":  `{"type":"recipient_delivery_report_sms","batch_id":"01X\u0000","status":"Delivered","code":0}`,
			"InvalidUTF8": "{\"type\":\"recipient_delivery_report_sms\",\"batch_id\":\"01X\xff\",\"status\":\"Delivered\",\"code\":0}",
		} {
			if st, err := f.PostReport(ctx, cb.URL+"/v1/receipts/sinch/sinch", []byte(body), f.Sign([]byte(body), time.Now())); err != nil || st != http.StatusBadRequest {
				t.Errorf("%s: got %d, %v, want 400", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("WithoutACallbackNothingIsRead", func(t *testing.T) {
		id := send(t)
		body, _, err := f.ReportBody(id, "Delivered", 0)
		if err != nil {
			t.Fatal(err)
		}
		plain := newSinch(t, f.URL, nil)
		_, _, err = plain.ReadReceipt(receipt.Callback{Header: textproto.MIMEHeader(f.Sign(body, time.Now())), Body: body}, time.Now())
		if !errors.Is(err, receipt.ErrBadSignature) {
			t.Errorf("got %v, want ErrBadSignature", err)
		}
	})
}
