package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/storetest/fixture"
)

func testReceipts(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	// sent begins and finishes a send with the provider message id, as the service does.
	mark := func(e *fixture.Env, r receipt.Receipt) bool {
		e.T.Helper()
		return markDelivery(e, r).Settled
	}

	t.Run("FirstReceiptSettlesTheSendByProviderID", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "SM1")
		if !mark(e, receipt.Receipt{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryDelivered}) {
			t.Fatal("first receipt: got unchanged, want changed")
		}
		r := e.SendRow(id)
		if r.Delivery != receipt.DeliveryDelivered || r.DeliveryError != "" || r.SendStatus != otp.SendSent {
			t.Errorf("got %+v, want sent and delivered", r)
		}
	})

	t.Run("ReplaysAndLaterReportsChangeNothing", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "SM1")
		mark(e, receipt.Receipt{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryUndelivered, Error: "30003"})
		for _, r := range []receipt.Receipt{
			{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryUndelivered, Error: "30003"},
			{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryDelivered},
			{Provider: "test", SendID: id, Status: receipt.DeliveryDelivered},
		} {
			if mark(e, r) {
				t.Errorf("%+v: got changed, want the first receipt to stand", r)
			}
		}
		if r := e.SendRow(id); r.Delivery != receipt.DeliveryUndelivered || r.DeliveryError != "30003" {
			t.Errorf("got %+v, want undelivered with 30003", r)
		}
	})

	t.Run("BySendID", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "")
		if !mark(e, receipt.Receipt{Provider: "test", SendID: id, Status: receipt.DeliveryDelivered}) {
			t.Fatal("got unchanged, want changed")
		}
		if r := e.SendRow(id); r.Delivery != receipt.DeliveryDelivered {
			t.Errorf("got %+v, want delivered", r)
		}
	})

	t.Run("UnknownOrForeignSendsAreIgnored", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "SM1")
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819012345678", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base()})
		e.MustFlush()
		blocked, _, err := e.Store.ListSends(e.Ctx, history.SendFilter{Status: history.StatusBlocked, Limit: 10})
		if err != nil || len(blocked) != 1 {
			t.Fatalf("ListSends: got %d rows, %v, want the blocked one", len(blocked), err)
		}
		for _, r := range []receipt.Receipt{
			{Provider: "test", ProviderID: "SM-unknown", Status: receipt.DeliveryDelivered},
			{Provider: "other", ProviderID: "SM1", Status: receipt.DeliveryDelivered},
			{Provider: "other", SendID: id, Status: receipt.DeliveryDelivered},
			{Provider: "test", SendID: fixture.NewID(), Status: receipt.DeliveryDelivered},
			{Provider: "test", SendID: "not-a-uuid", Status: receipt.DeliveryDelivered},
			{Provider: "", SendID: blocked[0].ID, Status: receipt.DeliveryDelivered},
		} {
			if mark(e, r) {
				t.Errorf("%+v: got changed, want nothing matched", r)
			}
		}
		if r := e.SendRow(id); r.Delivery != "" {
			t.Errorf("got %+v, want no receipt", r)
		}
	})

}

// testReceiptPrices holds the cases of testReceipts about the actual price.
func testReceiptPrices(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	// sent begins and finishes a send with the provider message id, as the service does.

	t.Run("ActualPriceIsRecordedOnceBesideTheEstimate", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "SM1")
		before := e.SendRow(id)
		usd := receipt.Price{Micros: 7500, Currency: "USD"}
		// The delivery first, without a price: nothing priced.
		if m := markDelivery(e, receipt.Receipt{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryDelivered}); !m.Settled || m.Priced {
			t.Fatalf("receipt without a price: got %+v, want settled and not priced", m)
		}
		// A later report with the price records it, though the send is settled.
		m := markDelivery(e, receipt.Receipt{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryUndelivered, Error: "30003", Price: usd})
		if want := (receipt.Marked{Priced: true, App: otp.DefaultAppID, Country: before.Country, Channel: before.Channel}); m != want {
			t.Errorf("receipt with the price: got %+v, want %+v", m, want)
		}
		// Replays and other prices change nothing.
		for _, r := range []receipt.Receipt{
			{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryDelivered, Price: usd},
			{Provider: "test", ProviderID: "SM1", Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 9000, Currency: "EUR"}},
			{Provider: "test", SendID: id, Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 1, Currency: "USD"}},
			{Provider: "other", ProviderID: "SM1", Status: receipt.DeliveryDelivered, Price: usd},
		} {
			if m := markDelivery(e, r); m != (receipt.Marked{}) {
				t.Errorf("%+v: got %+v, want nothing changed", r, m)
			}
		}
		r := e.SendRow(id)
		if r.ActualCost != 7500 || r.ActualCurrency != "USD" || r.Delivery != receipt.DeliveryDelivered || r.DeliveryError != "" ||
			r.Cost != before.Cost || r.Currency != before.Currency {
			t.Errorf("got %+v, want delivered, the estimate as it was and an actual price of 7500 USD", r)
		}
	})

	t.Run("FirstReceiptWithAPriceSettlesAndPrices", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := sentBy(e, "+819012345678", "")
		m := markDelivery(e, receipt.Receipt{Provider: "test", SendID: id, Status: receipt.DeliveryDelivered, Price: receipt.Price{Micros: 41_500, Currency: "EUR"}})
		if !m.Settled || !m.Priced {
			t.Errorf("got %+v, want settled and priced", m)
		}
		if r := e.SendRow(id); r.ActualCost != 41_500 || r.ActualCurrency != "EUR" || r.Delivery != receipt.DeliveryDelivered {
			t.Errorf("got %+v, want delivered at 41500 EUR", r)
		}
	})
}

// sentBy is a send of phone that its provider accepted as providerID.
func sentBy(e *fixture.Env, phone, providerID string) string {
	e.T.Helper()
	p := fixture.Params(phone, "111111", fixture.Base())
	st := e.Send(p)
	if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID,
		Status: otp.SendSent, ProviderID: providerID, Now: fixture.Base()}); err != nil {
		e.T.Fatalf("FinishSend: %v", err)
	}
	return p.SendID
}

// markDelivery records r (ten seconds after the send when it has no time), failing the test
// on error.
func markDelivery(e *fixture.Env, r receipt.Receipt) receipt.Marked {
	e.T.Helper()
	if r.Time.IsZero() {
		r.Time = fixture.Base().Add(10 * time.Second)
	}
	m, err := e.Store.MarkDelivery(e.Ctx, r)
	if err != nil {
		e.T.Fatalf("MarkDelivery(%+v): %v", r, err)
	}
	return m
}
