package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

func testReceipts(t *testing.T, newStore func(t *testing.T) Stores) {
	// sent begins and finishes a send with the provider message id, as the service does.
	sent := func(e *env, phone, providerID string) string {
		e.t.Helper()
		p := params(phone, "111111", base())
		st := e.send(p)
		if err := e.Store.FinishSend(e.ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID,
			Status: otp.SendSent, ProviderID: providerID, Now: base()}); err != nil {
			e.t.Fatalf("FinishSend: %v", err)
		}
		return p.SendID
	}
	mark := func(e *env, r otp.Receipt) bool {
		e.t.Helper()
		if r.Time.IsZero() {
			r.Time = base().Add(10 * time.Second)
		}
		changed, err := e.Receipts.MarkDelivery(e.ctx, r)
		if err != nil {
			e.t.Fatalf("MarkDelivery(%+v): %v", r, err)
		}
		return changed
	}

	t.Run("FirstReceiptSettlesTheSendByProviderID", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := sent(e, "+819012345678", "SM1")
		if !mark(e, otp.Receipt{Provider: "test", ProviderID: "SM1", Status: otp.DeliveryDelivered}) {
			t.Fatal("first receipt: got unchanged, want changed")
		}
		r := e.sendRow(id)
		if r.Delivery != otp.DeliveryDelivered || r.DeliveryError != "" || r.SendStatus != otp.SendSent {
			t.Errorf("got %+v, want sent and delivered", r)
		}
	})

	t.Run("ReplaysAndLaterReportsChangeNothing", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := sent(e, "+819012345678", "SM1")
		mark(e, otp.Receipt{Provider: "test", ProviderID: "SM1", Status: otp.DeliveryUndelivered, Error: "30003"})
		for _, r := range []otp.Receipt{
			{Provider: "test", ProviderID: "SM1", Status: otp.DeliveryUndelivered, Error: "30003"},
			{Provider: "test", ProviderID: "SM1", Status: otp.DeliveryDelivered},
			{Provider: "test", SendID: id, Status: otp.DeliveryDelivered},
		} {
			if mark(e, r) {
				t.Errorf("%+v: got changed, want the first receipt to stand", r)
			}
		}
		if r := e.sendRow(id); r.Delivery != otp.DeliveryUndelivered || r.DeliveryError != "30003" {
			t.Errorf("got %+v, want undelivered with 30003", r)
		}
	})

	t.Run("BySendID", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := sent(e, "+819012345678", "")
		if !mark(e, otp.Receipt{Provider: "test", SendID: id, Status: otp.DeliveryDelivered}) {
			t.Fatal("got unchanged, want changed")
		}
		if r := e.sendRow(id); r.Delivery != otp.DeliveryDelivered {
			t.Errorf("got %+v, want delivered", r)
		}
	})

	t.Run("UnknownOrForeignSendsAreIgnored", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := sent(e, "+819012345678", "SM1")
		e.Denied.RecordDenied(otp.DeniedSend{ID: newID(), Phone: "+819012345678", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: base()})
		e.flush()
		blocked, _, err := e.History.ListSends(e.ctx, history.SendFilter{Status: history.StatusBlocked, Limit: 10})
		if err != nil || len(blocked) != 1 {
			t.Fatalf("ListSends: got %d rows, %v, want the blocked one", len(blocked), err)
		}
		for _, r := range []otp.Receipt{
			{Provider: "test", ProviderID: "SM-unknown", Status: otp.DeliveryDelivered},
			{Provider: "other", ProviderID: "SM1", Status: otp.DeliveryDelivered},
			{Provider: "other", SendID: id, Status: otp.DeliveryDelivered},
			{Provider: "test", SendID: newID(), Status: otp.DeliveryDelivered},
			{Provider: "test", SendID: "not-a-uuid", Status: otp.DeliveryDelivered},
			{Provider: "", SendID: blocked[0].ID, Status: otp.DeliveryDelivered},
		} {
			if mark(e, r) {
				t.Errorf("%+v: got changed, want nothing matched", r)
			}
		}
		if r := e.sendRow(id); r.Delivery != "" {
			t.Errorf("got %+v, want no receipt", r)
		}
	})
}
