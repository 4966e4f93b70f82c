package eventstest

import (
	"maps"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// testEventPayloads is part of testEvents: every statement that writes an event writes a
// payload that decodes strictly into its Go type (claim decodes each one), with the values
// of the change it reports.
func testEventPayloads(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	e := fixture.New(t, newStore)
	e.Subscribe(otp.DefaultAppID)
	at := func(d time.Duration) time.Time { return fixture.Base().Add(d) }
	sendTo := func(phone string, d time.Duration, outcome otp.SendStatus) (otp.BeginSend, otp.Verification) {
		p := fixture.Params(phone, "123456", at(d))
		v := e.Send(p).Verification
		if outcome != "" {
			e.Finish(otp.FinishSend{SendID: p.SendID, VerificationID: v.ID, Status: outcome, Provider: "twilio", Now: at(d)})
		}
		return p, v
	}

	// Sent, then approved by a check on the row as read.
	_, approved := sendTo("+15550100021", 0, otp.SendSent)
	e.Check(approved.ID, "123456", at(time.Second))
	// Failed by the last wrong guess, decided again under the row's lock (a stale Seen).
	_, failed := sendTo("+15550100022", 0, otp.SendFailed)
	for i := range fixture.MaxAttempts - 1 {
		e.Check(failed.ID, "000000", at(time.Duration(i+1)*time.Second))
	}
	stale := failed
	_, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: failed.ID, ClientIP: "198.51.100.7", Now: at(time.Minute), Seen: &stale},
		fixture.DecideCode("000000", at(time.Minute)))
	if err != nil || oc != otp.OutcomeInvalidCode {
		t.Fatalf("last wrong guess: got %s, %v; want invalid_code", oc, err)
	}
	// Expired by a check, by the expiry job, and by a send that replaces it.
	_, checkedLate := sendTo("+15550100023", 0, otp.SendFailed)
	e.Check(checkedLate.ID, "123456", at(fixture.TTL))
	_, forgotten := sendTo("+15550100024", 0, otp.SendFailed)
	if n, err := e.Store.ExpireVerifications(e.Ctx, at(fixture.TTL), 10); err != nil || n != 1 {
		t.Fatalf("ExpireVerifications: got %d, %v; want 1", n, err)
	}
	_, replaced := sendTo("+15550100025", time.Minute, otp.SendFailed)
	sendTo("+15550100025", fixture.TTL+time.Minute, "")
	// Failed as not delivered: its only send was undone.
	undone, canceled := sendTo("+15550100026", 2*time.Minute, "")
	e.Finish(otp.FinishSend{SendID: undone.SendID, VerificationID: canceled.ID, Status: otp.SendFailed, Undo: true, Created: true, Now: at(3 * time.Minute)})
	// Refused, and fraud blocks lifted and run out.
	e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+15550100027", ClientIP: "192.0.2.9", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: at(0)})
	e.MustFlush()
	lifted := fraud.Block{ID: fixture.NewID(), Scope: "prefix", Target: "+1555010", Mode: fraud.ModeEnforce, Reason: "tripped", StartedAt: at(0), EndsAt: at(time.Hour)}
	ranOut := fraud.Block{ID: fixture.NewID(), Scope: "country", Target: "US", Mode: fraud.ModeShadow, Reason: "tripped", StartedAt: at(0), EndsAt: at(time.Minute)}
	for _, b := range []fraud.Block{lifted, ranOut} {
		if err := e.Store.RecordFraudBlock(e.Ctx, b, history.AdminAction{Action: "fraud_block"}); err != nil {
			t.Fatalf("RecordFraudBlock: %v", err)
		}
	}
	if _, err := e.Store.LiftFraudBlock(e.Ctx, lifted.ID, at(10*time.Second), "console", history.AdminAction{Action: "fraud_lift"}); err != nil {
		t.Fatalf("LiftFraudBlock: %v", err)
	}
	if n, err := e.Store.EndFraudBlocks(e.Ctx, at(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("EndFraudBlocks: got %d, %v; want 1", n, err)
	}

	got := e.Drain(at(time.Hour))
	count := map[string]int{}
	byType := map[string]map[string]events.Event{} // type → subject id → event
	for _, ev := range got {
		count[ev.Type]++
		v, err := fixture.DecodePayload(ev)
		if err != nil {
			continue // claim reported it
		}
		id := ""
		switch d := v.(type) {
		case *events.VerificationData:
			id = d.VerificationID
		case *events.FraudBlockData:
			id = d.BlockID
		case *events.BlockedData:
			id = d.SendID
		}
		if byType[ev.Type] == nil {
			byType[ev.Type] = map[string]events.Event{}
		}
		byType[ev.Type][id] = ev
	}
	want := map[string]int{
		events.VerificationCreated: 7, events.VerificationSent: 1, events.VerificationApproved: 1,
		events.VerificationExpired: 3, events.VerificationFailed: 2, events.SendBlocked: 1,
		events.FraudBlockStarted: 2, events.FraudBlockEnded: 2,
	}
	if !maps.Equal(count, want) {
		t.Fatalf("got %v, want %v: one of every type from every statement that writes it", count, want)
	}
	for _, c := range []struct {
		typ    string
		v      otp.Verification
		status otp.Status
		reason string
	}{
		{events.VerificationApproved, approved, otp.StatusApproved, ""},
		{events.VerificationFailed, failed, otp.StatusFailed, "too_many_attempts"},
		{events.VerificationExpired, checkedLate, otp.StatusExpired, ""},
		{events.VerificationExpired, forgotten, otp.StatusExpired, ""},
		{events.VerificationExpired, replaced, otp.StatusExpired, ""},
		{events.VerificationFailed, canceled, otp.StatusCanceled, "not_delivered"},
	} {
		ev, ok := byType[c.typ][c.v.ID]
		if !ok {
			t.Errorf("%s of %s: none", c.typ, c.v.Address)
			continue
		}
		d := fixture.Payload[events.VerificationData](t, ev)
		if d.Status != string(c.status) || d.Reason != c.reason || d.To != c.v.Address || d.AppID != otp.DefaultAppID ||
			d.Channel != otp.ChannelSMS || d.ExpiresAt != events.Time(c.v.ExpiresAt) {
			t.Errorf("%s of %s: got %+v, want status %s, reason %q and the verification's fields", c.typ, c.v.Address, d, c.status, c.reason)
		}
	}
	if d := fixture.Payload[events.FraudBlockData](t, byType[events.FraudBlockEnded][ranOut.ID]); d.EndedAt != events.Time(ranOut.EndsAt) ||
		d.StartedAt != events.Time(ranOut.StartedAt) || d.Scope != "country" || d.Reason != "tripped" {
		t.Errorf("ran out: got %+v", d)
	}
}
