package sms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
)

func TestInfobipCallbackToken(t *testing.T) {
	a := sms.InfobipCallbackToken([]byte(infobipSecret), "m1")
	for name, other := range map[string]string{
		"OtherMessage": sms.InfobipCallbackToken([]byte(infobipSecret), "m2"),
		"OtherSecret":  sms.InfobipCallbackToken([]byte("other"), "m1"),
	} {
		if other == a {
			t.Errorf("%s: got the same token, want another", name)
		}
	}
	if len(a) != 64 || a != sms.InfobipCallbackToken([]byte(infobipSecret), "m1") {
		t.Errorf("got %q, want 64 hex digits, the same each time", a)
	}
}

func TestInfobipDeliveryReports(t *testing.T) {
	ctx := context.Background()
	store := &receipts{}
	f := smstest.NewInfobip(t, infobipKey)
	var s *sms.Infobip
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		receiptHandler(store, map[string]receipt.Reader{"infobip/infobip": s}, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(cb.Close)
	notify := cb.URL + "/v1/receipts/infobip/infobip"
	s = newInfobip(t, f.URL, func(c *sms.InfobipConfig) { c.NotifyURL, c.WebhookSecret = notify, infobipSecret })
	n := 0
	send := func() string {
		t.Helper()
		n++
		m := message()
		m.ID = fmt.Sprintf("0190f3a2-7c1e-7b4a-9d2e-%012d", n)
		id, err := s.Send(ctx, m)
		if err != nil || id != m.ID {
			t.Fatalf("Send: got %q, %v", id, err)
		}
		return id
	}
	push := func(body string) int {
		t.Helper()
		resp, err := http.Post(notify, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	report := func(id, token, status string) string {
		return fmt.Sprintf(`{"results":[{"messageId":%q,"callbackData":%q,"status":%s,"messageCount":1}]}`, id, token, status)
	}
	const delivered = `{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}`

	t.Run("DeliveredIsRecordedWithItsPrice", func(t *testing.T) {
		id := send()
		st, err := f.Callback(ctx, 3, "DELIVERED_TO_HANDSET", id)
		r, ok := store.get("infobip/" + id + "/")
		if err != nil || st != http.StatusNoContent || !ok || r.Status != receipt.DeliveryDelivered || r.Price != (receipt.Price{Micros: 12_500, Currency: "EUR"}) {
			t.Errorf("got %d, %v, %+v, want 204 and delivered at 0.0125 EUR", st, err, r)
		}
	})

	t.Run("ABatchSettlesEachMessage", func(t *testing.T) {
		a, b := send(), send()
		st, err := f.Callback(ctx, 2, "UNDELIVERABLE_NOT_DELIVERED", a, b)
		if err != nil || st != http.StatusNoContent {
			t.Fatalf("got %d, %v, want 204", st, err)
		}
		for _, id := range []string{a, b} {
			if r, ok := store.get("infobip/" + id + "/"); !ok || r.Status != receipt.DeliveryUndelivered || r.Error != "EC_ABSENT_SUBSCRIBER" {
				t.Errorf("%s: got %+v, want undelivered with EC_ABSENT_SUBSCRIBER", id, r)
			}
		}
	})

	t.Run("PendingChangesNothing", func(t *testing.T) {
		id := send()
		if st, err := f.Callback(ctx, 1, "PENDING_ENROUTE", id); err != nil || st != http.StatusNoContent {
			t.Errorf("got %d, %v, want 204", st, err)
		}
		if _, ok := store.get("infobip/" + id + "/"); ok {
			t.Error("a pending report settled the send")
		}
	})

	t.Run("ForgedIsRefused", func(t *testing.T) {
		a, b := send(), send()
		genuine, err := f.Report(3, "DELIVERED_TO_HANDSET", a)
		if err != nil {
			t.Fatal(err)
		}
		var batch map[string][]map[string]any
		if err := json.Unmarshal(genuine, &batch); err != nil || len(batch["results"]) != 1 {
			t.Fatalf("the fake's report: %v", err)
		}
		forgedB := map[string]any{"messageId": b, "callbackData": sms.InfobipCallbackToken([]byte("guess"), b), "status": batch["results"][0]["status"]}
		batch["results"] = append(batch["results"], forgedB)
		withForgedB, _ := json.Marshal(batch)
		if st := push(string(genuine[:len(genuine)-2]) + `,` + report(b, sms.InfobipCallbackToken([]byte(infobipSecret), b), delivered)[len(`{"results":[`):]); st != http.StatusNoContent {
			t.Fatalf("a genuine batch of the two: got %d, want 204", st)
		}
		before := store.calls
		for name, body := range map[string]string{
			"NoToken":             report(a, "", delivered),
			"WrongSecret":         report(a, sms.InfobipCallbackToken([]byte("guess"), a), delivered),
			"AnotherMessageToken": report(b, sms.InfobipCallbackToken([]byte(infobipSecret), a), delivered),
			"OneForgedInABatch":   string(withForgedB),
			"NotJSON":             "results=1",
		} {
			if st := push(body); st != http.StatusForbidden {
				t.Errorf("%s: got %d, want 403", name, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times by forged reports, want 0", store.calls-before)
		}
	})

	t.Run("GenuineButMalformedIsBadRequest", func(t *testing.T) {
		id := send()
		token := sms.InfobipCallbackToken([]byte(infobipSecret), id)
		before := store.calls
		for name, body := range map[string]string{
			"NoResults":     `{"results":[]}`,
			"NULInTheError": strings.Replace(report(id, token, `{"groupId":2,"groupName":"UNDELIVERABLE","id":9,"name":"UNDELIVERABLE_NOT_DELIVERED"}`), `"messageCount":1`, `"messageCount":1,"error":{"id":27,"name":"EC\u0000"}`, 1),
		} {
			if st := push(body); st != http.StatusBadRequest {
				t.Errorf("%s: got %d, want 400", name, st)
			}
		}
		if store.calls != before {
			t.Errorf("store called %d times, want 0", store.calls-before)
		}
	})

	t.Run("WithoutANotifyURLNoReportIsTaken", func(t *testing.T) {
		plain := newInfobip(t, f.URL, nil)
		id := send()
		body, _ := f.Report(3, "DELIVERED_TO_HANDSET", id)
		_, ok, err := plain.ReadReceipt(receipt.Callback{Body: body}, time.Now())
		if ok || !errors.Is(err, receipt.ErrBadSignature) {
			t.Errorf("got %v, %v, want ErrBadSignature", ok, err)
		}
	})

	t.Run("ReadReceiptGivesTheFirst", func(t *testing.T) {
		id := send()
		body, _ := f.Report(4, "EXPIRED_EXPIRED", id)
		r, ok, err := s.ReadReceipt(receipt.Callback{Body: bytes.Clone(body)}, time.Now())
		if err != nil || !ok || r.ProviderID != id || r.Status != receipt.DeliveryUndelivered || otp.CheckTextIn("receipt", r) != nil {
			t.Errorf("got %+v, %v, %v, want the expired message undelivered", r, ok, err)
		}
	})
}
