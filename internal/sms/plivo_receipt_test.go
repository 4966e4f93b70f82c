package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"testing"
	"time"

	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func TestPlivoReceipt(t *testing.T) {
	ctx := context.Background()
	store := &receipts{}
	var s *sms.Plivo
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"plivo/plivo": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	v2 := smstest.NewPlivo(t, plivoAccount)
	v3 := smstest.NewPlivo(t, smstest.PlivoAccount{AuthID: plivoAccount.AuthID, AuthToken: plivoAccount.AuthToken, SignV3: true})
	callback := cb.URL + "/v1/receipts/plivo/plivo"
	s = newPlivo(t, v2.URL, func(c *sms.PlivoConfig) { c.Callback = callback })
	s3 := newPlivo(t, v3.URL, func(c *sms.PlivoConfig) { c.Callback = callback })
	send := func(t *testing.T, s *sms.Plivo) string {
		t.Helper()
		id, err := s.Send(ctx, message())
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		return id
	}

	t.Run("StepsChangeNothing", func(t *testing.T) {
		id := send(t, s)
		for _, status := range []string{"queued", "sent"} {
			if st, err := v2.Receipt(ctx, id, status, ""); err != nil || st != http.StatusNoContent {
				t.Errorf("%s: got %d, %v, want 204", status, st, err)
			}
		}
		if _, ok := store.get("plivo/" + id + "/"); ok {
			t.Error("a step settled the send")
		}
	})

	t.Run("DeliveredSignedWithV2IsRecorded", func(t *testing.T) {
		id := send(t, s)
		st, err := v2.Receipt(ctx, id, "delivered", "")
		r, ok := store.get("plivo/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryDelivered || r.Time.IsZero() {
			t.Errorf("got %d, %v, %+v, want 204 and the send delivered", st, err, r)
		}
	})

	t.Run("UndeliveredSignedWithV3IsRecordedWithItsErrorCode", func(t *testing.T) {
		id := send(t, s3)
		st, err := v3.Receipt(ctx, id, "undelivered", "50")
		r, ok := store.get("plivo/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "50" {
			t.Errorf("got %d, %v, %+v, want 204 and undelivered with ErrorCode 50", st, err, r)
		}
	})

	t.Run("ForgedIsRefused", func(t *testing.T) {
		id := send(t, s3)
		before := store.calls
		for name, c := range map[string]struct {
			fake *smstest.Plivo
			edit func(form url.Values, h http.Header)
		}{
			"Unsigned": {v2, func(_ url.Values, h http.Header) { clear(h) }},
			"WrongToken": {v2, func(_ url.Values, h http.Header) {
				sig := sms.PlivoSignatureV2("other-token", callback, h.Get(sms.PlivoNonceV2Header))
				h.Set(sms.PlivoSignatureV2Header, sig)
				h.Set(sms.PlivoSignatureMaV2Header, sig)
			}},
			"OtherURL": {v2, func(_ url.Values, h http.Header) {
				sig := sms.PlivoSignatureV2(plivoAccount.AuthToken, cb.URL+"/v1/receipts/plivo/other", h.Get(sms.PlivoNonceV2Header))
				h.Set(sms.PlivoSignatureV2Header, sig)
				h.Set(sms.PlivoSignatureMaV2Header, sig)
			}},
			"OtherNonce":       {v2, func(_ url.Values, h http.Header) { h.Set(sms.PlivoNonceV2Header, "1") }},
			"V3TamperedStatus": {v3, func(form url.Values, _ http.Header) { form.Set("Status", "failed") }},
			"V3TamperedUUID":   {v3, func(form url.Values, _ http.Header) { form.Set("MessageUUID", "other") }},
			"V3SignatureDropped": {v3, func(_ url.Values, h http.Header) {
				h.Del(sms.PlivoSignatureV3Header)
				h.Del(sms.PlivoSignatureMaV3Header)
				h.Set(sms.PlivoSignatureV3Header, "x")
			}},
		} {
			form, to, err := v3.ReceiptForm(id, "delivered", "")
			if err != nil {
				t.Fatal(err)
			}
			h := c.fake.Sign(to, form)
			c.edit(form, h)
			if st, err := c.fake.PostReceipt(ctx, to, form, h); err != nil || st != http.StatusForbidden {
				t.Errorf("%s: got %d, %v, want 403", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by forged callbacks, want 0", store.calls-before)
		}
	})

	t.Run("SignedWithInvalidTextIsBadRequest", func(t *testing.T) {
		id := send(t, s3)
		before := store.calls
		for name, edit := range map[string]func(url.Values){
			"NULInMessageUUID": func(f url.Values) { f.Set("MessageUUID", id+"\x00") },
			"InvalidUTF8":      func(f url.Values) { f.Set("ErrorCode", "\xff") },
		} {
			form, to, err := v3.ReceiptForm(id, "failed", "")
			if err != nil {
				t.Fatal(err)
			}
			edit(form)
			if st, err := v3.PostReceipt(ctx, to, form, v3.Sign(to, form)); err != nil || st != http.StatusBadRequest {
				t.Errorf("%s: got %d, %v, want 400", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("WithoutACallbackNothingIsRead", func(t *testing.T) {
		id := send(t, s)
		form, to, err := v2.ReceiptForm(id, "delivered", "")
		if err != nil {
			t.Fatal(err)
		}
		plain := newPlivo(t, v2.URL, nil)
		_, _, err = plain.ReadReceipt(receipt.Callback{Header: textproto.MIMEHeader(v2.Sign(to, form)), Body: []byte(form.Encode())}, time.Now())
		if !errors.Is(err, receipt.ErrBadSignature) {
			t.Errorf("got %v, want ErrBadSignature", err)
		}
	})
}
