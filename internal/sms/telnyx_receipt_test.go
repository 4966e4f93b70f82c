package sms_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func TestVerifyTelnyxSignature(t *testing.T) {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1773468566, 0)
	body := []byte(`{"data":{"event_type":"message.finalized"}}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	// What Telnyx documents: Ed25519 over "<timestamp>|<raw body>", base64.
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(private, []byte(ts+"|"+string(body))))
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	for name, c := range map[string]struct {
		sig, ts string
		body    []byte
		now     time.Time
		ok      bool
	}{
		"Valid":                {sig, ts, body, now, true},
		"WithinTolerance":      {sig, ts, body, now.Add(sms.TelnyxTolerance), true},
		"Stale":                {sig, ts, body, now.Add(sms.TelnyxTolerance + time.Second), false},
		"FromTheFuture":        {sig, ts, body, now.Add(-sms.TelnyxTolerance - time.Second), false},
		"TamperedBody":         {sig, ts, bytes.Replace(body, []byte("finalized"), []byte("sent"), 1), now, false},
		"OtherTimestamp":       {sig, strconv.FormatInt(now.Unix()+1, 10), body, now, false},
		"OtherKey":             {base64.StdEncoding.EncodeToString(ed25519.Sign(other, []byte(ts+"|"+string(body)))), ts, body, now, false},
		"BodyWithoutTimestamp": {base64.StdEncoding.EncodeToString(ed25519.Sign(private, body)), ts, body, now, false},
		"NoSignature":          {"", ts, body, now, false},
		"NoTimestamp":          {sig, "", body, now, false},
		"NotBase64":            {"not base64!", ts, body, now, false},
	} {
		err := sms.VerifyTelnyxSignature(public, c.sig, c.ts, c.body, c.now)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v, want valid: %v", name, err, c.ok)
		}
	}
	if err := sms.VerifyTelnyxSignature(nil, sig, ts, body, now); err == nil {
		t.Error("no key: got nil, want an error")
	}
}

func TestTelnyxWebhook(t *testing.T) {
	ctx := context.Background()
	store := &receipts{}
	f := smstest.NewTelnyx(t, telnyxKey)
	var s *sms.Telnyx
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"telnyx/telnyx": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	hook := cb.URL + "/v1/receipts/telnyx/telnyx"
	s = newTelnyx(t, f.URL, func(c *sms.TelnyxConfig) {
		c.WebhookURL = hook
		c.PublicKey, _ = sms.ParseTelnyxPublicKey(f.PublicKey)
	})
	send := func() string {
		t.Helper()
		id, err := s.Send(ctx, message())
		if err != nil || id == "" {
			t.Fatalf("Send: got %q, %v", id, err)
		}
		return id
	}
	postSigned := func(body []byte, h http.Header) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(body))
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	t.Run("DeliveredIsRecordedWithItsCost", func(t *testing.T) {
		id := send()
		st, err := f.Callback(ctx, id, "delivered", "")
		r, ok := store.get("telnyx/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryDelivered || r.Time.IsZero() ||
			r.Price != (receipt.Price{Micros: 4000, Currency: "USD"}) {
			t.Errorf("got %d, %v, %+v, want 204 and delivered at 0.0040 USD", st, err, r)
		}
	})

	t.Run("FailedIsUndeliveredWithTelnyxsCode", func(t *testing.T) {
		id := send()
		st, err := f.Callback(ctx, id, "delivery_failed", "40008")
		r, ok := store.get("telnyx/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "40008" {
			t.Errorf("got %d, %v, %+v, want 204 and undelivered with 40008", st, err, r)
		}
	})

	t.Run("StepsAndUnconfirmedChangeNothing", func(t *testing.T) {
		id := send()
		before := len(store.settled)
		if st, err := f.Callback(ctx, id, "delivery_unconfirmed", ""); err != nil || st != http.StatusNoContent {
			t.Errorf("delivery_unconfirmed: got %d, %v, want 204", st, err)
		}
		body, _ := f.Event(id, "sent", "")
		body = bytes.Replace(body, []byte(`"message.finalized"`), []byte(`"message.sent"`), 1)
		if st := postSigned(body, f.Sign(body, time.Now())); st != http.StatusNoContent {
			t.Errorf("message.sent: got %d, want 204", st)
		}
		if len(store.settled) != before {
			t.Errorf("got %d receipts, want still %d", len(store.settled), before)
		}
	})

	t.Run("ForgedOrStaleIsRefused", func(t *testing.T) {
		id := send()
		body, err := f.Event(id, "delivered", "")
		if err != nil {
			t.Fatal(err)
		}
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		forged := f.Sign(body, time.Now())
		forged.Set("telnyx-signature-ed25519", base64.StdEncoding.EncodeToString(ed25519.Sign(other, append([]byte(forged.Get("telnyx-timestamp")+"|"), body...))))
		before := store.calls
		for name, st := range map[string]int{
			"OtherKey":     postSigned(body, forged),
			"TamperedBody": postSigned(bytes.Replace(body, []byte(id), []byte(id[:len(id)-1]+"0"), 1), f.Sign(body, time.Now())),
			"Stale":        postSigned(body, f.Sign(body, time.Now().Add(-sms.TelnyxTolerance-time.Minute))),
			"Unsigned":     postSigned(body, http.Header{"Content-Type": {"application/json"}}),
		} {
			if st != http.StatusForbidden {
				t.Errorf("%s: got %d, want 403", name, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by forged webhooks, want 0", store.calls-before)
		}
	})

	t.Run("SignedButMalformedIsBadRequest", func(t *testing.T) {
		before := store.calls
		for _, body := range []string{`nope`, `{"data":{"record_type":"event","event_type":"message.finalized","payload":{"to":[]}}}`,
			`{"data":{"record_type":"event","event_type":"message.finalized","payload":{"id":"m1\u0000","to":[{"status":"delivered"}]}}}`,
			"{\"data\":{\"record_type\":\"event\",\"event_type\":\"message.finalized\",\"payload\":{\"id\":\"m1\xff\",\"to\":[{\"status\":\"delivered\"}]}}}"} {
			if st := postSigned([]byte(body), f.Sign([]byte(body), time.Now())); st != http.StatusBadRequest {
				t.Errorf("%q: got %d, want 400", body, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("WithoutAPublicKeyNoWebhookIsTaken", func(t *testing.T) {
		plain := newTelnyx(t, f.URL, nil)
		body, _ := f.Event(send(), "delivered", "")
		h := f.Sign(body, time.Now())
		_, ok, err := plain.ReadReceipt(receipt.Callback{Header: textproto.MIMEHeader(h), Body: body}, time.Now())
		if ok || !errors.Is(err, receipt.ErrBadSignature) || !strings.Contains(err.Error(), "telnyx") {
			t.Errorf("got %v, %v, want ErrBadSignature", ok, err)
		}
	})
}
