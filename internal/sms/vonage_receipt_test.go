package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strconv"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func TestVonageReceipt(t *testing.T) {
	ctx := context.Background()
	store := &receipts{}
	var s *sms.Vonage
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"vonage/vonage": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	f := smstest.NewVonage(t, vonageAccount)
	s = newVonage(t, f.URL, func(c *sms.VonageConfig) { c.Callback = cb.URL + "/v1/receipts/vonage/vonage" })
	send := func(t *testing.T) string {
		t.Helper()
		id, err := s.Send(ctx, message())
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		return id
	}

	t.Run("StepsChangeNothing", func(t *testing.T) {
		id := send(t)
		for _, status := range []string{"accepted", "buffered", "unknown"} {
			if st, err := f.Receipt(ctx, id, status, ""); err != nil || st != http.StatusNoContent {
				t.Errorf("%s: got %d, %v, want 204", status, st, err)
			}
		}
		if _, ok := store.get("vonage/" + id + "/"); ok {
			t.Error("a step settled the send")
		}
	})

	t.Run("DeliveredIsRecorded", func(t *testing.T) {
		id := send(t)
		st, err := f.Receipt(ctx, id, "delivered", "")
		r, ok := store.get("vonage/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryDelivered || r.Error != "" || r.Time.IsZero() {
			t.Errorf("got %d, %v, %+v, want 204 and the send delivered", st, err, r)
		}
	})

	t.Run("UndeliveredAsJSONIsRecordedWithItsErrCode", func(t *testing.T) {
		json, err := smstest.StartVonage(smstest.VonageAccount{APIKey: vonageAccount.APIKey, APISecret: vonageAccount.APISecret,
			SignatureSecret: vonageAccount.SignatureSecret, SignatureMethod: vonageAccount.SignatureMethod, JSONReceipts: true})
		if err != nil {
			t.Fatal(err)
		}
		defer json.Close()
		s2 := newVonage(t, json.URL, func(c *sms.VonageConfig) { c.Callback = cb.URL + "/v1/receipts/vonage/vonage" })
		id, err := s2.Send(ctx, message())
		if err != nil {
			t.Fatal(err)
		}
		st, err := json.Receipt(ctx, id, "rejected", "6")
		r, ok := store.get("vonage/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "6" {
			t.Errorf("got %d, %v, %+v, want 204 and undelivered with err-code 6", st, err, r)
		}
	})

	t.Run("ForgedStaleOrForeignIsRefused", func(t *testing.T) {
		id := send(t)
		before := store.calls
		resign := func(p map[string]string) {
			p["sig"] = sms.VonageSignature(vonageAccount.SignatureSecret, vonageAccount.SignatureMethod, p)
		}
		for name, edit := range map[string]func(map[string]string){
			"Unsigned":    func(p map[string]string) { delete(p, "sig") },
			"WrongSecret": func(p map[string]string) { p["sig"] = sms.VonageSignature("other", vonageAccount.SignatureMethod, p) },
			"OtherMethod": func(p map[string]string) {
				p["sig"] = sms.VonageSignature(vonageAccount.SignatureSecret, sms.VonageMD5Hash, p)
			},
			"TamperedStatus":  func(p map[string]string) { p["status"] = "failed" },
			"TamperedErrCode": func(p map[string]string) { p["err-code"] = "7" },
			"Stale": func(p map[string]string) {
				p["timestamp"] = strconv.FormatInt(time.Now().Add(-6*time.Minute).Unix(), 10)
				resign(p)
			},
			"NoTimestamp":     func(p map[string]string) { delete(p, "timestamp"); resign(p) },
			"OtherAccount":    func(p map[string]string) { p["api-key"] = "ffff0000"; resign(p) },
			"SignatureNotHex": func(p map[string]string) { p["sig"] = "not hex" },
		} {
			params, callback, err := f.ReceiptParams(id, "delivered", "")
			if err != nil {
				t.Fatal(err)
			}
			edit(params)
			if st, err := f.PostReceipt(ctx, callback, params); err != nil || st != http.StatusForbidden {
				t.Errorf("%s: got %d, %v, want 403", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by refused receipts, want 0", store.calls-before)
		}
	})

	t.Run("SignedWithInvalidTextIsBadRequest", func(t *testing.T) {
		id := send(t)
		before := store.calls
		for name, edit := range map[string]func(map[string]string){
			"NULInMessageID":   func(p map[string]string) { p["messageId"] += "\x00" },
			"InvalidUTF8":      func(p map[string]string) { p["err-code"] = "\xff" },
			"NULInAnotherName": func(p map[string]string) { p["x\x00"] = "1" },
		} {
			params, callback, err := f.ReceiptParams(id, "failed", "")
			if err != nil {
				t.Fatal(err)
			}
			edit(params)
			params["sig"] = sms.VonageSignature(vonageAccount.SignatureSecret, vonageAccount.SignatureMethod, params)
			if st, err := f.PostReceipt(ctx, callback, params); err != nil || st != http.StatusBadRequest {
				t.Errorf("%s: got %d, %v, want 400", name, st, err)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("WithoutTheSecretNothingIsRead", func(t *testing.T) {
		id := send(t)
		params, _, err := f.ReceiptParams(id, "delivered", "")
		if err != nil {
			t.Fatal(err)
		}
		plain := newVonage(t, f.URL, func(c *sms.VonageConfig) { c.SignatureSecret = "" })
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		_, _, err = plain.ReadReceipt(receipt.Callback{Header: textproto.MIMEHeader{}, Body: []byte(form.Encode())}, time.Now())
		if !errors.Is(err, receipt.ErrBadSignature) || otp.ErrorCode(err) != otp.CodeInvalidSignature {
			t.Errorf("got %v, want ErrBadSignature", err)
		}
	})
}
