package storetest

import (
	"reflect"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/receipt"
	"otpgate/internal/storetest/fixture"
)

// testDelivery is what a store keeps of how a send went out: its channel, country and
// SMS encoding from BeginSend, the provider that took it and every provider attempt from
// FinishSend, email addresses as addresses, and the delivery rates of the console.
func testDelivery(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	attempts := []otp.ProviderAttempt{
		{Provider: "primary", Outcome: otp.ProviderFailed, Error: "primary: status 400: bad number", Start: fixture.Base(), Duration: 120 * time.Millisecond},
		{Provider: "backup", Outcome: otp.ProviderSent, ProviderID: "SM2", Start: fixture.Base().Add(120 * time.Millisecond), Duration: 80 * time.Millisecond},
	}
	t.Run("SendKeepsChannelEncodingProviderAndAttempts", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		p.Provider, p.Country, p.Encoding, p.Segments = "router", "JP", otp.EncodingUCS2, 2
		st := e.Send(p)
		r := e.SendRow(p.SendID)
		if r.Channel != "sms" || r.Country != "JP" || r.Encoding != otp.EncodingUCS2 || r.Segments != 2 || r.Provider != "router" || len(r.Attempts) != 0 {
			t.Fatalf("while sending: got %+v, want sms to JP in UCS-2, 2 segments, by router, no attempts yet", r)
		}
		if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendSent,
			Provider: "backup", ProviderID: "SM2", Attempts: attempts, Now: fixture.Base().Add(time.Second)}); err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		e.MustFlush()
		r = e.SendRow(p.SendID)
		if r.Provider != "backup" || r.ProviderMessageID != "SM2" || !reflect.DeepEqual(r.Attempts, attempts) {
			t.Errorf("got provider %q id %q attempts %+v, want backup SM2 %+v", r.Provider, r.ProviderMessageID, r.Attempts, attempts)
		}
	})

	t.Run("FailedSendKeepsItsAttempts", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		st := e.Send(p)
		failed := attempts[:1]
		if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed,
			Provider: "primary", Error: "primary: status 400", Attempts: failed, Undo: true, Created: st.Created, Now: fixture.Base().Add(time.Second)}); err != nil {
			t.Fatalf("FinishSend: %v", err)
		}
		r := e.SendRow(p.SendID)
		if r.SendStatus != otp.SendFailed || r.Provider != "primary" || !reflect.DeepEqual(r.Attempts, failed) {
			t.Errorf("got %+v, want failed by primary with its one attempt", r)
		}
	})

	t.Run("EmailIsKeptAndFoundByAddress", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("Ana@example.com", "111111", fixture.Base())
		p.Channel = otp.ChannelEmail
		st := e.Send(p)
		if st.Verification.Address != "Ana@example.com" || st.Verification.Channel != otp.ChannelEmail {
			t.Errorf("got %+v, want the email verification of Ana@example.com", st.Verification)
		}
		v, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{Phone: "Ana@example.com", Now: fixture.Base()}, fixture.DecideCode("111111", fixture.Base()))
		if err != nil || oc != otp.OutcomeApproved || v.ID != st.Verification.ID {
			t.Errorf("check by address: got %s, %v, want %s approved", oc, err, st.Verification.ID)
		}
		rows, _, err := e.Store.ListSends(e.Ctx, history.SendFilter{Phone: "Ana@example.com"})
		if err != nil || len(rows) != 1 || rows[0].Channel != otp.ChannelEmail || rows[0].Country != "" {
			t.Errorf("history by address: got %+v, %v, want the one email send", rows, err)
		}
	})

	t.Run("RefusedSendKeepsItsChannel", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := fixture.NewID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: id, Phone: "+819012345678", Channel: otp.ChannelVoice, Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base()})
		e.MustFlush()
		if r := e.SendRow(id); r.Channel != otp.ChannelVoice {
			t.Errorf("got channel %q, want voice", r.Channel)
		}
	})

	t.Run("DeliveryRatesPerChannelCountryAndProvider", func(t *testing.T) {
		e := fixture.New(t, newStore)
		finish := func(phone, channel, country, provider, providerID string, segments int, status otp.SendStatus, at time.Time) string {
			p := fixture.Params(phone, "111111", at)
			p.Channel, p.Country, p.Segments = channel, country, segments
			st := e.Send(p)
			if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: status,
				Provider: provider, ProviderID: providerID, Now: at}); err != nil {
				t.Fatalf("FinishSend: %v", err)
			}
			return p.SendID
		}
		finish("+819012345601", "sms", "JP", "twilio", "SM1", 1, otp.SendSent, fixture.Base())
		finish("+819012345602", "sms", "JP", "twilio", "SM2", 2, otp.SendSent, fixture.Base())
		finish("+819012345603", "sms", "JP", "twilio", "", 0, otp.SendFailed, fixture.Base())
		finish("+819012345604", "sms", "JP", "backup", "B1", 1, otp.SendSent, fixture.Base())
		finish("+14155550100", "voice", "US", "twilio", "CA1", 0, otp.SendSent, fixture.Base())
		finish("a@example.com", "email", "", "smtp", "m1@example.com", 0, otp.SendSent, fixture.Base())
		finish("+819012345605", "sms", "JP", "twilio", "SM-old", 1, otp.SendSent, fixture.Base().Add(-2*time.Hour))
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819012345606", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base()})
		e.MustFlush()
		for _, r := range []receipt.Receipt{
			{Provider: "twilio", ProviderID: "SM1", Status: receipt.DeliveryDelivered, Time: fixture.Base()},
			{Provider: "twilio", ProviderID: "SM2", Status: receipt.DeliveryUndelivered, Error: "30003", Time: fixture.Base()},
			{Provider: "backup", ProviderID: "B1", Status: receipt.DeliveryDelivered, Time: fixture.Base()},
		} {
			if _, err := e.Store.MarkDelivery(e.Ctx, r); err != nil {
				t.Fatalf("MarkDelivery: %v", err)
			}
		}
		got, err := e.Store.DeliveryRates(e.Ctx, fixture.Base().Add(-time.Hour), "")
		if err != nil {
			t.Fatalf("DeliveryRates: %v", err)
		}
		want := []history.DeliveryRate{
			{Channel: "sms", Country: "JP", Provider: "backup", Sends: 1, Sent: 1, Delivered: 1, Segments: 1},
			{Channel: "sms", Country: "JP", Provider: "twilio", Sends: 3, Sent: 2, Delivered: 1, Undelivered: 1, Segments: 3},
			{Channel: "voice", Country: "US", Provider: "twilio", Sends: 1, Sent: 1},
			{Channel: "email", Country: "", Provider: "smtp", Sends: 1, Sent: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		if rate, ok := got[1].Rate(); !ok || rate != 0.5 {
			t.Errorf("twilio JP rate: got %v, %v, want 0.5", rate, ok)
		}
		other, err := e.Store.DeliveryRates(e.Ctx, fixture.Base().Add(-time.Hour), "00000000-0000-0000-0000-0000000000aa")
		if err != nil || len(other) != 0 {
			t.Errorf("another app: got %+v, %v, want none", other, err)
		}
	})
}
