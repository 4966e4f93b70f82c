package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

// seedDelivery writes one send that went out on channel to country through provider,
// with its attempts, and the receipt's status (none when "").
func (e *adminEnv) seedDelivery(to, channel, country, provider string, segments int, status string, attempts []otp.ProviderAttempt) string {
	e.t.Helper()
	ctx := context.Background()
	sendID, at := uuid.Must(uuid.NewV7()).String(), time.Now().UTC().Add(-time.Minute)
	start, err := e.store.BeginSend(ctx, otp.BeginSend{
		Phone: to, Channel: channel, Country: country, Encoding: map[bool]string{true: otp.EncodingGSM7}[segments > 0], Segments: segments,
		Locale: "en", ClientIP: "192.0.2.9", Provider: "router", Now: at, TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
		NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: sendID, CodeHash: func(string) []byte { return []byte(testCodeHash) },
		Cost: 50_000, Currency: "USD",
	})
	if err != nil {
		e.t.Fatalf("BeginSend: %v", err)
	}
	if err := e.store.FinishSend(ctx, otp.FinishSend{SendID: sendID, VerificationID: start.Verification.ID, Status: otp.SendSent,
		Provider: provider, ProviderID: "id-" + sendID, Attempts: attempts, Now: at}); err != nil {
		e.t.Fatalf("FinishSend: %v", err)
	}
	if status != "" {
		if _, err := e.store.MarkDelivery(ctx, receipt.Receipt{Provider: provider, ProviderID: "id-" + sendID, Status: status, Error: "30003", Time: at,
			Price: receipt.Price{Micros: 7500, Currency: "USD"}}); err != nil {
			e.t.Fatalf("MarkDelivery: %v", err)
		}
	}
	return sendID
}

func TestAdminDelivery(t *testing.T) {
	e := newAdminEnv(t, nil)
	failover := []otp.ProviderAttempt{
		{Provider: "primary", Outcome: otp.ProviderFailed, Error: "primary: status 400", Start: time.Now().UTC(), Duration: 40 * time.Millisecond},
		{Provider: "backup", Outcome: otp.ProviderSent, ProviderID: "x", Start: time.Now().UTC(), Duration: 30 * time.Millisecond},
	}
	sms := e.seedDelivery("+819012340001", "sms", "JP", "backup", 2, receipt.DeliveryDelivered, failover)
	e.seedDelivery("+819012340002", "sms", "JP", "backup", 1, receipt.DeliveryUndelivered, nil)
	e.seedDelivery("+819012340003", "sms", "JP", "backup", 1, receipt.DeliveryDelivered, nil)
	e.seedDelivery("ana@example.com", "email", "", "smtp", 0, "", nil)

	t.Run("APICountsPerChannelCountryAndProvider", func(t *testing.T) {
		w := e.call(t, http.MethodGet, "/admin/api/delivery?since=1h", bearer(testAdminToken), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("got %d %s", w.Code, w.Body)
		}
		var got deliveryResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Rates) != 2 {
			t.Fatalf("got %+v, want two rows", got.Rates)
		}
		r := got.Rates[0]
		if r.Channel != "sms" || r.Country != "JP" || r.Provider != "backup" || r.Sends != 3 || r.Delivered != 2 || r.Undelivered != 1 ||
			r.Segments != 4 || r.DeliveryRate == nil || *r.DeliveryRate < 0.66 || *r.DeliveryRate > 0.67 {
			t.Errorf("got %+v, want 3 SMS to JP by backup, 2 of 3 receipts delivered, 4 segments", r)
		}
		if e := got.Rates[1]; e.Channel != "email" || e.Provider != "smtp" || e.DeliveryRate != nil {
			t.Errorf("got %+v, want the email by smtp without a rate", e)
		}
	})

	t.Run("BadSinceIs400", func(t *testing.T) {
		w := e.call(t, http.MethodGet, "/admin/api/delivery?since=soon", bearer(testAdminToken), nil)
		if p := decodeProblem(t, w); w.Code != http.StatusBadRequest || p.Errors["since"] == "" {
			t.Errorf("got %d %+v, want 400 naming since", w.Code, p)
		}
	})

	t.Run("SendShowsItsChannelEncodingAttemptsAndReceipt", func(t *testing.T) {
		w := e.call(t, http.MethodGet, "/admin/api/sends/"+sms, bearer(testAdminToken), nil)
		var s adminSend
		if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || w.Code != http.StatusOK {
			t.Fatalf("got %d %s: %v", w.Code, w.Body, err)
		}
		if s.Channel != "sms" || s.Country != "JP" || s.Encoding != otp.EncodingGSM7 || s.Segments != 2 || s.Provider != "backup" ||
			len(s.Attempts) != 2 || s.Attempts[0].Outcome != "failed" || s.Attempts[1].Provider != "backup" ||
			s.Delivery != receipt.DeliveryDelivered || s.DeliveredAt == nil ||
			s.Cost != "0.05" || s.Currency != "USD" || s.ActualCost != "0.0075" || s.ActualCurrency != "USD" {
			t.Errorf("got %+v, want sms to JP in GSM-7 (2 segments), two attempts, delivered, estimated at 0.05 USD and billed 0.0075 USD", s)
		}
	})

	t.Run("PageShowsRatesAndHistoryShowsEncodings", func(t *testing.T) {
		body := e.page(t, "/admin/delivery?since=24h", http.StatusOK)
		for _, want := range []string{`<td data-label="Provider" class="provider">backup</td>`, `<td data-label="Delivery rate" class="rate">66.7%</td>`,
			`<td data-label="Country" class="country">JP</td>`, `<td data-label="Channel" class="channel">email</td>`} {
			if !strings.Contains(body, want) {
				t.Errorf("delivery page lacks %q", want)
			}
		}
		hist := e.page(t, "/admin/?phone=%2B819012340001", http.StatusOK)
		for _, want := range []string{"GSM-7 · 2 segments", "primary: failed", "delivered", "est. 0.05 USD · billed 0.0075 USD"} {
			if !strings.Contains(hist, want) {
				t.Errorf("history lacks %q", want)
			}
		}
		mail := e.page(t, "/admin/?phone=ana%40Example.COM", http.StatusOK)
		if !strings.Contains(mail, `class="phone">ana@example.com`) {
			t.Errorf("history by email address lacks the send to ana@example.com")
		}
	})
}
