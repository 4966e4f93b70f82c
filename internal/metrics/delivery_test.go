package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"otpgate/internal/delivery"
	"otpgate/internal/message"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
)

type failing struct{ name string }

func (f failing) Name() string { return f.name }
func (f failing) Send(context.Context, otp.Message) (string, error) {
	return "", errors.Join(otp.ErrNotDelivered, errors.New("refused"))
}

type ok struct{ name string }

func (o ok) Name() string                                      { return o.name }
func (o ok) Send(context.Context, otp.Message) (string, error) { return "id", nil }

type settleOnce struct{ seen map[string]bool }

// MarkDelivery settles and prices each send once, as the stores do.
func (s settleOnce) MarkDelivery(_ context.Context, r receipt.Receipt) (receipt.Marked, error) {
	if s.seen[r.ProviderID] {
		return receipt.Marked{}, nil
	}
	s.seen[r.ProviderID] = true
	return receipt.Marked{Settled: true, Priced: r.Price.Currency != "", App: otp.DefaultAppID, Country: "JP", Channel: "sms"}, nil
}

func TestDeliveryMetrics(t *testing.T) {
	m := New()
	m.Providers("primary", "backup")

	t.Run("AttemptsAndBreakerState", func(t *testing.T) {
		r, err := delivery.New(delivery.Config{
			Providers: []delivery.Provider{
				{Name: "primary", Channels: []string{"sms"}, Sender: failing{"primary"}},
				{Name: "backup", Channels: []string{"sms"}, Sender: ok{"backup"}},
			},
			Breaker:  delivery.BreakerConfig{Failures: 2, Cooldown: time.Hour},
			Observer: m.DeliveryObserver(),
		})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := r.Deliver(context.Background(), otp.Message{Channel: "sms", To: "+819012345678"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			provider, outcome string
			want              float64
		}{{"primary", "failed", 2}, {"primary", "skipped", 1}, {"backup", "sent", 3}} {
			if got := counter(t, m, "otpgate_delivery_attempts_total", "provider", c.provider, "channel", "sms", "outcome", c.outcome); got != c.want {
				t.Errorf("%s %s: got %v, want %v", c.provider, c.outcome, got, c.want)
			}
		}
		if got := counter(t, m, "otpgate_provider_breaker_state", "provider", "primary"); got != 2 {
			t.Errorf("primary's breaker: got %v, want 2 (open)", got)
		}
	})

	t.Run("ReceiptsCountOnlyWhenTheySettleASend", func(t *testing.T) {
		rs := m.Receipts(settleOnce{seen: map[string]bool{}})
		for range 2 {
			if _, err := rs.MarkDelivery(context.Background(), receipt.Receipt{Provider: "backup", ProviderID: "SM1", Status: receipt.DeliveryDelivered}); err != nil {
				t.Fatal(err)
			}
		}
		if got := counter(t, m, "otpgate_deliveries_total", "provider", "backup", "status", "delivered"); got != 1 {
			t.Errorf("got %v, want 1: the replay is not counted", got)
		}
	})

	t.Run("ActualPricesCountOnceInTheirCurrency", func(t *testing.T) {
		rs := m.Receipts(settleOnce{seen: map[string]bool{}})
		for _, r := range []receipt.Receipt{
			{Provider: "twilio", ProviderID: "SM7", Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 7500, Currency: "USD"}},
			{Provider: "twilio", ProviderID: "SM7", Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 7500, Currency: "USD"}},
			{Provider: "twilio", ProviderID: "SM8", Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 41_500, Currency: "EUR"}},
			{Provider: "twilio", ProviderID: "SM9", Status: receipt.DeliveryDelivered},
		} {
			if _, err := rs.MarkDelivery(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		for cur, want := range map[string]float64{"USD": 0.0075, "EUR": 0.0415} {
			if got := counter(t, m, "otpgate_spend_actual_total", "app", otp.DefaultAppID, "country", "JP", "channel", "sms", "currency", cur); got != want {
				t.Errorf("%s: got %v, want %v (the replay is not counted)", cur, got, want)
			}
		}
	})

	t.Run("SMSEncodingAndSegments", func(t *testing.T) {
		c, err := message.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		r := m.Renderer(c)
		for _, l := range []string{"en", "ja"} {
			if _, err := r.Render(otp.MessageParams{Channel: "sms", Locale: l, Code: "123456", TTL: 5 * time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Render(otp.MessageParams{Channel: "email", Locale: "en", Code: "123456", TTL: 5 * time.Minute}); err != nil {
			t.Fatal(err)
		}
		for _, e := range []string{otp.EncodingGSM7, otp.EncodingUCS2} {
			if got := counter(t, m, "otpgate_sms_total", "encoding", e); got != 1 {
				t.Errorf("%s: got %v SMS, want 1", e, got)
			}
			if got := counter(t, m, "otpgate_sms_segments_total", "encoding", e); got != 1 {
				t.Errorf("%s: got %v segments, want 1", e, got)
			}
		}
	})
}
