package sms_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

// receipts is an receipt.Store that settles each send once, as the real stores do.
type receipts struct {
	mu      sync.Mutex
	settled map[string]receipt.Receipt
	calls   int
}

func (s *receipts) MarkDelivery(_ context.Context, r receipt.Receipt) (receipt.Marked, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	key := r.Provider + "/" + r.ProviderID + "/" + r.SendID
	if _, done := s.settled[key]; done {
		return receipt.Marked{}, nil
	}
	if s.settled == nil {
		s.settled = map[string]receipt.Receipt{}
	}
	s.settled[key] = r
	return receipt.Marked{Settled: true}, nil
}

func (s *receipts) get(key string) (receipt.Receipt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.settled[key]
	return r, ok
}

// receiptHandler serves /v1/receipts/<source> as the public API does, through the
// domain's receipt service: 204, or the status of the error's code.
func receiptHandler(store receipt.Store, readers map[string]receipt.Reader, now func() time.Time) http.Handler {
	rs := receipt.New(store, readers)
	if now != nil {
		rs.Now = now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := rs.Receive(r.Context(), strings.TrimPrefix(r.URL.Path, "/v1/receipts/"),
			receipt.Callback{URI: r.URL.RequestURI(), Header: textproto.MIMEHeader(r.Header), Body: body})
		status := map[otp.Code]int{"": http.StatusNoContent, otp.CodeInvalidSignature: http.StatusForbidden,
			otp.CodeInvalidRequest: http.StatusBadRequest, otp.CodeNotFound: http.StatusNotFound}[otp.ErrorCode(err)]
		if status == 0 {
			status = http.StatusInternalServerError
		}
		w.WriteHeader(status)
	})
}

func TestTwilioSignature(t *testing.T) {
	// The example in Twilio's documentation of request validation.
	form := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675309"}, "Digits": {"1234"},
		"From": {"+14158675309"}, "To": {"+18005551212"}}
	const u, want = "https://mycompany.com/myapp.php?foo=1&bar=2", "RSOYDt4T1cUTdK1PDd93/VVr8B8="
	if got := sms.TwilioSignature("12345", u, form); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for name, ok := range map[string]bool{
		"Valid":             sms.VerifyTwilioSignature("12345", u, form, want),
		"WithDefaultPort":   sms.VerifyTwilioSignature("12345", "https://mycompany.com:443/myapp.php?foo=1&bar=2", form, want),
		"OtherToken":        !sms.VerifyTwilioSignature("54321", u, form, want),
		"OtherURL":          !sms.VerifyTwilioSignature("12345", u+"&x=1", form, want),
		"TamperedParam":     !sms.VerifyTwilioSignature("12345", u, url.Values{"Digits": {"9999"}}, want),
		"NotBase64":         !sms.VerifyTwilioSignature("12345", u, form, "not base64!"),
		"EmptySignature":    !sms.VerifyTwilioSignature("12345", u, form, ""),
		"EmptyTokenNeverOK": !sms.VerifyTwilioSignature("", u, form, sms.TwilioSignature("", u, form)),
	} {
		if !ok {
			t.Errorf("%s: got the wrong verdict", name)
		}
	}
}

func TestTwilioStatusCallback(t *testing.T) {
	store := &receipts{}
	var cb *httptest.Server
	var s *sms.Twilio
	f := smstest.NewTwilio(t, twilioSID, twilioToken)
	cb = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"twilio/twilio": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	s = newTwilio(t, f.URL, func(c *sms.TwilioConfig) { c.StatusCallback = cb.URL + "/v1/receipts/twilio/twilio?x=1" })
	sid, err := s.Send(context.Background(), message())
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	ctx := context.Background()

	t.Run("SentIsAStepAndChangesNothing", func(t *testing.T) {
		if st, err := f.Callback(ctx, sid, "sent", ""); err != nil || st != http.StatusNoContent || len(store.settled) != 0 {
			t.Errorf("got %d, %v and %d receipts, want 204 and none", st, err, len(store.settled))
		}
	})

	t.Run("UndeliveredIsRecordedWithTheErrorCode", func(t *testing.T) {
		st, err := f.Callback(ctx, sid, "undelivered", "30003")
		r, ok := store.get("twilio/" + sid + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "30003" || r.Time.IsZero() {
			t.Errorf("got %d, %v, %+v, want 204 and undelivered with 30003", st, err, r)
		}
	})

	t.Run("ForgedCallbackIsRefused", func(t *testing.T) {
		before := store.calls
		for name, sign := range map[string]func(u string, form url.Values) string{
			"WrongToken": func(u string, form url.Values) string { return sms.TwilioSignature("other", u, form) },
			"OtherURL":   func(u string, form url.Values) string { return sms.TwilioSignature(twilioToken, u+"&y=2", form) },
			"None":       func(string, url.Values) string { return "" },
		} {
			form := url.Values{"AccountSid": {twilioSID}, "MessageSid": {sid}, "MessageStatus": {"delivered"}}
			u := cb.URL + "/v1/receipts/twilio/twilio?x=1"
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set(sms.TwilioSignatureHeader, sign(u, form))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: got %d, want 403", name, resp.StatusCode)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by forged callbacks, want 0", store.calls-before)
		}
	})

	t.Run("GenuineCallbackWithInvalidTextIsBadRequest", func(t *testing.T) {
		before := store.calls
		for name, form := range map[string]url.Values{
			"NULInMessageSid":         {"AccountSid": {twilioSID}, "MessageSid": {sid + "\x00"}, "MessageStatus": {"delivered"}},
			"InvalidUTF8InMessageSid": {"AccountSid": {twilioSID}, "MessageSid": {sid + "\xff"}, "MessageStatus": {"delivered"}},
			"NULInErrorCode":          {"AccountSid": {twilioSID}, "MessageSid": {sid}, "MessageStatus": {"failed"}, "ErrorCode": {"3\x00"}},
			"NULInAnotherParameter":   {"AccountSid": {twilioSID}, "MessageSid": {sid}, "MessageStatus": {"delivered"}, "To": {"+1\x00"}},
		} {
			u := cb.URL + "/v1/receipts/twilio/twilio?x=1"
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set(sms.TwilioSignatureHeader, sms.TwilioSignature(twilioToken, u, form))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: got %d, want 400", name, resp.StatusCode)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("PriceIsReadIgnoredWhenInvalid", func(t *testing.T) {
		for _, c := range []struct {
			name, price, unit string
			want              receipt.Price
			ignored           bool
		}{
			{"TwilioNegative", "-0.00750", "USD", receipt.Price{Micros: 7500, Currency: "USD"}, false},
			{"Positive", "0.0415", "EUR", receipt.Price{Micros: 41_500, Currency: "EUR"}, false},
			{"Zero", "0.00000", "USD", receipt.Price{Currency: "USD"}, false},
			{"NotYetKnown", "", "USD", receipt.Price{}, false},
			{"NonNumeric", "abc", "USD", receipt.Price{}, true},
			{"Exponent", "-7.5e-3", "USD", receipt.Price{}, true},
			{"TooPrecise", "-0.0000001", "USD", receipt.Price{}, true},
			{"NUL", "-0.0075\x00", "USD", receipt.Price{}, true},
			{"InvalidUTF8", "\xff", "USD", receipt.Price{}, true},
			{"NULInUnit", "-0.0075", "US\x00", receipt.Price{}, true},
			{"LowerCaseUnit", "-0.0075", "usd", receipt.Price{}, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				form := url.Values{"AccountSid": {twilioSID}, "MessageSid": {"SM" + c.name}, "MessageStatus": {"delivered"},
					"Price": {c.price}, "PriceUnit": {c.unit}}
				u := cb.URL + "/v1/receipts/twilio/twilio?x=1"
				body := form.Encode()
				h := textproto.MIMEHeader{}
				h.Set(sms.TwilioSignatureHeader, sms.TwilioSignature(twilioToken, u, form))
				r, ok, err := s.ReadReceipt(receipt.Callback{URI: "/v1/receipts/twilio/twilio?x=1", Header: h, Body: []byte(body)}, time.Now())
				if err != nil || !ok || r.Status != receipt.DeliveryDelivered || r.ProviderID != "SM"+c.name {
					t.Fatalf("got %+v, %v, %v, want the delivered receipt whatever its price", r, ok, err)
				}
				if r.Price != c.want || (r.PriceIgnored != "") != c.ignored {
					t.Errorf("got price %+v (ignored: %q), want %+v (ignored: %v)", r.Price, r.PriceIgnored, c.want, c.ignored)
				}
				if err := otp.CheckTextIn("receipt", r); err != nil {
					t.Errorf("the receipt holds text no store keeps: %v", err)
				}
			})
		}
	})

	t.Run("OtherAccountIsRefused", func(t *testing.T) {
		form := url.Values{"AccountSid": {"AC" + strings.Repeat("f", 32)}, "MessageSid": {sid}, "MessageStatus": {"delivered"}}
		u := cb.URL + "/v1/receipts/twilio/twilio?x=1"
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(sms.TwilioSignatureHeader, sms.TwilioSignature(twilioToken, u, form))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})
}

func TestWebhookReceipt(t *testing.T) {
	store := &receipts{}
	w, err := sms.NewWebhook(sms.WebhookConfig{URL: "https://sms.example.com/send", Secret: webhookSecret, Name: "backup"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1773468566, 0)
	h := receiptHandler(store, map[string]receipt.Reader{"webhook/backup": w}, func() time.Time { return now })
	post := func(body string, signedAt time.Time, secret string) int {
		req := httptest.NewRequest(http.MethodPost, "/v1/receipts/webhook/backup", strings.NewReader(body))
		req.Header.Set(sms.SignatureHeader, sms.Sign(secret, signedAt, []byte(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const good = `{"id":"0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e","status":"undelivered","error":"handset off"}`

	t.Run("SignedReceiptIsRecorded", func(t *testing.T) {
		st := post(good, now, webhookSecret)
		r, ok := store.get("backup//0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e")
		if st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "handset off" {
			t.Errorf("got %d, %+v, want 204 and the receipt of backup's send", st, r)
		}
	})

	t.Run("ReplayWithinToleranceChangesNothing", func(t *testing.T) {
		if st := post(good, now.Add(-time.Minute), webhookSecret); st != http.StatusNoContent || len(store.settled) != 1 {
			t.Errorf("got %d and %d receipts, want 204 and still one", st, len(store.settled))
		}
	})

	t.Run("StaleOrForgedIsRefused", func(t *testing.T) {
		before := store.calls
		for name, st := range map[string]int{
			"Stale":    post(good, now.Add(-sms.DefaultTolerance-time.Second), webhookSecret),
			"WrongKey": post(good, now, "other-secret"),
		} {
			if st != http.StatusForbidden {
				t.Errorf("%s: got %d, want 403", name, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("OtherInstanceIsNotFound", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, "/v1/receipts/webhook/other", strings.NewReader(good))
		req.Header.Set(sms.SignatureHeader, sms.Sign(webhookSecret, now, []byte(good)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("got %d, want 404", rec.Code)
		}
	})

	t.Run("InvalidTextIsBadRequest", func(t *testing.T) {
		before := store.calls
		for _, body := range []string{`{"id":"0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e\u0000","status":"delivered"}`,
			"{\"id\":\"0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e\xff\",\"status\":\"delivered\"}",
			`{"id":"0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0f","status":"undelivered","error":"off\u0000"}`} {
			if st := post(body, now, webhookSecret); st != http.StatusBadRequest {
				t.Errorf("%q: got %d, want 400", body, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("MalformedIsBadRequest", func(t *testing.T) {
		for _, body := range []string{`{"id":"x","status":"sent"}`, `{"status":"delivered"}`, `{"id":"x","status":"delivered","extra":1}`, `{"id":"x","status":"delivered"} {}`, `nope`} {
			if st := post(body, now, webhookSecret); st != http.StatusBadRequest {
				t.Errorf("%s: got %d, want 400", body, st)
			}
		}
	})
}
