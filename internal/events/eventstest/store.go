package eventstest

import (
	"slices"
	"testing"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// otherApp is an app without endpoints.
const otherApp = "0190aaaa-0000-7000-8000-000000000002"

func testEvents(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("AVerificationsChangesAreEventsInOrderForSubscribedAppsOnly", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID)
		p := fixture.Params("+15550100001", "123456", fixture.Base())
		st := e.Send(p)
		other := fixture.Params("+15550100001", "123456", fixture.Base())
		other.AppID = otherApp
		e.Send(other)
		e.Finish(otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendSent, Provider: "twilio", Now: fixture.Base().Add(time.Second)})
		e.MustFlush()
		e.Check(st.Verification.ID, "000000", fixture.Base().Add(2*time.Second))
		e.Check(st.Verification.ID, "123456", fixture.Base().Add(3*time.Second))

		got := e.Drain(fixture.Base().Add(time.Hour))
		want := []string{events.VerificationCreated, events.VerificationSent, events.VerificationApproved}
		if !slices.Equal(fixture.Types(got), want) {
			t.Fatalf("got %v, want %v (nothing for the app without endpoints, nothing for a wrong code)", fixture.Types(got), want)
		}
		created, sent, approved := fixture.VerificationPayload(t, got[0]), fixture.VerificationPayload(t, got[1]), fixture.VerificationPayload(t, got[2])
		if created.VerificationID != st.Verification.ID || created.SendID != p.SendID || created.To != p.Phone ||
			created.AppID != otp.DefaultAppID || created.Status != "pending" || created.Channel != "sms" {
			t.Errorf("created: got %+v", created)
		}
		if sent.SendID != p.SendID || sent.Provider != "twilio" {
			t.Errorf("sent: got %+v, want send %s by twilio", sent, p.SendID)
		}
		if approved.Status != "approved" || approved.Attempts != 1 {
			t.Errorf("approved: got %+v, want approved after 1 wrong attempt", approved)
		}
		if !got[0].CreatedAt.Equal(fixture.Base()) || !got[2].CreatedAt.Equal(fixture.Base().Add(3*time.Second)) {
			t.Errorf("times: got %v and %v, want the changes' times", got[0].CreatedAt, got[2].CreatedAt)
		}
		if got[0].ID != events.EventID(events.VerificationCreated, st.Verification.ID) {
			t.Errorf("created id: got %s, want %s", got[0].ID, events.EventID(events.VerificationCreated, st.Verification.ID))
		}
	})

}

// testEventOrder holds the cases of testEvents about the order of one verification's events and refused sends.
func testEventOrder(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ALaterEventWaitsForTheEarlierOneOfItsVerification", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ep := e.Subscribe(otp.DefaultAppID, events.VerificationCreated, events.VerificationSent, events.VerificationApproved)
		a := fixture.Params("+15550100002", "111111", fixture.Base())
		b := fixture.Params("+15550100003", "222222", fixture.Base())
		va := e.Send(a).Verification
		e.Send(b)
		e.Check(va.ID, "111111", fixture.Base().Add(time.Second))
		now := fixture.Base().Add(time.Minute)
		first := e.Claim(now)
		if len(first) != 2 || first[0].Event.Type != events.VerificationCreated || first[1].Event.Type != events.VerificationCreated {
			t.Fatalf("first claim: got %v, want both created events and not the approval", claimTypes(first))
		}
		if first[0].EndpointID != ep || first[0].Attempt != 1 || first[0].URL != "http://receiver.test/hook" || string(first[0].SecretSealed) != "sealed" {
			t.Errorf("claim: got %+v", first[0])
		}
		if again := e.Claim(now); len(again) != 0 {
			t.Fatalf("claimed during the lease: got %v, want nothing", claimTypes(again))
		}
		// a's created fails and is retried later; b's is delivered; a's approval still waits.
		e.SettleEvents(first[:1], events.Pending, now, now.Add(10*time.Second))
		e.SettleEvents(first[1:], events.Delivered, now, time.Time{})
		if got := e.Claim(now.Add(5 * time.Second)); len(got) != 0 {
			t.Fatalf("before the retry: got %v, want nothing", claimTypes(got))
		}
		// What waits behind a's created is due no sooner than it, so claims need not pass it.
		pending, _ := e.Store.Deliveries(e.Ctx, otp.DefaultAppID, ep, events.DeliveryFilter{Status: events.Pending})
		for _, d := range pending {
			if d.Event.Type == events.VerificationApproved && !d.NextAttemptAt.Equal(now.Add(10*time.Second)) {
				t.Errorf("a's approval: due %v, want with a's retry at %v", d.NextAttemptAt, now.Add(10*time.Second))
			}
		}
		retry := e.Claim(now.Add(10 * time.Second))
		if len(retry) != 1 || retry[0].Event.ID != first[0].Event.ID || retry[0].Attempt != 2 {
			t.Fatalf("retry: got %+v, want a's created at attempt 2", retry)
		}
		// A settlement of the stale first claim changes nothing.
		e.SettleEvents(first[:1], events.Parked, now, time.Time{})
		// The lease runs out without a settlement: claimed again, attempt 3.
		lapsed := e.Claim(now.Add(10*time.Second + time.Minute))
		if len(lapsed) != 1 || lapsed[0].Event.ID != first[0].Event.ID || lapsed[0].Attempt != 3 {
			t.Fatalf("after the lease: got %+v, want a's created at attempt 3", lapsed)
		}
		e.SettleEvents(lapsed, events.Parked, now.Add(2*time.Minute), time.Time{})
		// The approval waits for the outcome of a's send, whose sent event comes first.
		if held := e.Claim(now.Add(2 * time.Minute)); len(held) != 0 {
			t.Fatalf("while a's send has no outcome: got %v, want nothing", claimTypes(held))
		}
		e.Finish(otp.FinishSend{SendID: a.SendID, VerificationID: va.ID, Status: otp.SendSent, Now: now.Add(2 * time.Minute)})
		e.MustFlush()
		sent := e.Claim(now.Add(2 * time.Minute))
		if len(sent) != 1 || sent[0].Event.Type != events.VerificationSent {
			t.Fatalf("after the outcome: got %v, want the sent event before the approval", claimTypes(sent))
		}
		e.SettleEvents(sent, events.Delivered, now.Add(2*time.Minute), time.Time{})
		next := e.Claim(now.Add(2 * time.Minute))
		if len(next) != 1 || next[0].Event.Type != events.VerificationApproved {
			t.Fatalf("after the sent event: got %v, want the approval", claimTypes(next))
		}
		e.SettleEvents(next, events.Delivered, now.Add(2*time.Minute), time.Time{})

		parked, err := e.Store.Deliveries(e.Ctx, otp.DefaultAppID, ep, events.DeliveryFilter{Status: events.Parked})
		if err != nil || len(parked) != 1 || parked[0].Event.ID != first[0].Event.ID || parked[0].Attempts != 3 || parked[0].LastError != "down" || parked[0].LastStatus != 500 {
			t.Fatalf("parked deliveries: got %+v, %v", parked, err)
		}
		all, _ := e.Store.Deliveries(e.Ctx, otp.DefaultAppID, ep, events.DeliveryFilter{})
		if len(all) != 4 || all[0].Event.Type != events.VerificationSent || all[1].Event.Type != events.VerificationApproved ||
			all[1].Status != events.Delivered || all[1].DeliveredAt.IsZero() {
			t.Errorf("all deliveries, newest written first: got %v", deliveryTypes(all))
		}
		d, err := e.Store.Redeliver(e.Ctx, otp.DefaultAppID, ep, first[0].Event.ID, now.Add(3*time.Minute), history.AdminAction{Action: "webhook_redelivered"})
		if err != nil || d.Status != events.Pending || d.Attempts != 0 {
			t.Fatalf("Redeliver: got %+v, %v; want pending with no attempts", d, err)
		}
		re := e.Claim(now.Add(3 * time.Minute))
		if len(re) != 1 || re[0].Event.ID != first[0].Event.ID || !re[0].WindowStart.Equal(now.Add(3*time.Minute)) {
			t.Fatalf("after Redeliver: got %+v, want it due with a new window", re)
		}
		if _, err := e.Store.Redeliver(e.Ctx, otherApp, ep, first[0].Event.ID, now, history.AdminAction{Action: "webhook_redelivered"}); err == nil {
			t.Error("Redeliver through another app: got nil, want not found")
		}
		if _, err := e.Store.Deliveries(e.Ctx, otherApp, ep, events.DeliveryFilter{}); err == nil {
			t.Error("Deliveries through another app: got nil, want not found")
		}
	})

	t.Run("RefusedSendsAndUndoneSends", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID)
		blocked := fixture.NewID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: blocked, Phone: "+15550100004", ClientIP: "192.0.2.9", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base().Add(-time.Second)})
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+15550100004", ClientIP: "192.0.2.9", Status: otp.SendDuplicate, Reason: "duplicate 1/5s", Time: fixture.Base()})
		p := fixture.Params("+15550100005", "333333", fixture.Base())
		st := e.Send(p)
		e.Finish(otp.FinishSend{SendID: p.SendID, VerificationID: st.Verification.ID, Status: otp.SendFailed, Error: "refused", Undo: true, Created: true, Now: fixture.Base().Add(time.Second)})
		e.MustFlush()
		got := e.Drain(fixture.Base().Add(time.Minute))
		slices.SortStableFunc(got, func(a, b events.Event) int { return a.CreatedAt.Compare(b.CreatedAt) })
		if want := []string{events.SendBlocked, events.VerificationCreated, events.VerificationFailed}; !slices.Equal(fixture.Types(got), want) {
			t.Fatalf("got %v, want %v (no event for a duplicate)", fixture.Types(got), want)
		}
		if b := fixture.Payload[events.BlockedData](t, got[0]); b.SendID != blocked || b.Reason != "phone 1/1m" || b.To != "+15550100004" {
			t.Errorf("blocked: got %+v", b)
		}
		if f := fixture.VerificationPayload(t, got[2]); f.Reason != "not_delivered" || f.Status != "canceled" {
			t.Errorf("failed: got %+v, want not_delivered, canceled", f)
		}
	})

}

// testEventEndings holds the cases of testEvents about expiry, failures and fraud blocks.
func testEventEndings(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ExpiryIsFoundOnceAndTooManyAttemptsFail", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID, events.VerificationExpired, events.VerificationFailed)
		p := fixture.Params("+15550100006", "444444", fixture.Base())
		v := e.Send(p).Verification
		q := fixture.Params("+15550100007", "555555", fixture.Base())
		w := e.Send(q).Verification
		for _, x := range []struct {
			send string
			v    otp.Verification
		}{{p.SendID, v}, {q.SendID, w}} {
			e.Finish(otp.FinishSend{SendID: x.send, VerificationID: x.v.ID, Status: otp.SendSent, Now: fixture.Base()})
		}
		e.MustFlush()
		if n, err := e.Store.ExpireVerifications(e.Ctx, fixture.Base().Add(fixture.TTL-time.Second), 10); err != nil || n != 0 {
			t.Fatalf("before expiry: got %d, %v; want 0", n, err)
		}
		for i := range fixture.MaxAttempts {
			e.Check(w.ID, "000000", fixture.Base().Add(time.Duration(i+1)*time.Second))
		}
		n, err := e.Store.ExpireVerifications(e.Ctx, fixture.Base().Add(fixture.TTL), 10)
		if err != nil || n != 1 {
			t.Fatalf("at expiry: got %d, %v; want 1", n, err)
		}
		if got := e.Verification(v.ID); got.Status != otp.StatusExpired || !got.ClosedAt.Equal(fixture.Base().Add(fixture.TTL)) {
			t.Errorf("verification: got %s closed %v, want expired at its expiry", got.Status, got.ClosedAt)
		}
		if n, _ := e.Store.ExpireVerifications(e.Ctx, fixture.Base().Add(2*fixture.TTL), 10); n != 0 {
			t.Errorf("second pass: got %d, want 0", n)
		}
		if _, oc := e.Check(v.ID, "444444", fixture.Base().Add(2*fixture.TTL)); oc != otp.OutcomeExpired {
			t.Errorf("check after: got %s, want expired", oc)
		}
		got := e.Drain(fixture.Base().Add(3 * fixture.TTL))
		slices.SortStableFunc(got, func(a, b events.Event) int { return a.CreatedAt.Compare(b.CreatedAt) })
		if want := []string{events.VerificationFailed, events.VerificationExpired}; !slices.Equal(fixture.Types(got), want) {
			t.Fatalf("got %v, want %v", fixture.Types(got), want)
		}
		if f := fixture.VerificationPayload(t, got[0]); f.Reason != "too_many_attempts" || f.VerificationID != w.ID {
			t.Errorf("failed: got %+v", f)
		}
		if x := fixture.VerificationPayload(t, got[1]); x.VerificationID != v.ID || x.Status != "expired" {
			t.Errorf("expired: got %+v", x)
		}
		// A send after expiry creates a new verification; the old one is expired already.
		r := fixture.Params("+15550100006", "666666", fixture.Base().Add(3*fixture.TTL))
		if st := e.Send(r); !st.Created {
			t.Errorf("send after expiry: got %+v, want a new verification", st)
		}
		if got := e.Drain(fixture.Base().Add(4 * fixture.TTL)); len(got) != 0 {
			t.Errorf("after the new send: got %v, want nothing (not subscribed to created)", fixture.Types(got))
		}
	})

	t.Run("FraudBlocksGoToEveryAppsSubscribers", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID, events.FraudBlockStarted, events.FraudBlockEnded)
		e.Subscribe(otherApp, events.FraudBlockEnded)
		lifted := fraud.Block{ID: fixture.NewID(), Scope: "prefix", Target: "+8190123", Mode: fraud.ModeEnforce, Reason: "tripped", StartedAt: fixture.Base(), EndsAt: fixture.Base().Add(time.Hour)}
		ranOut := fraud.Block{ID: fixture.NewID(), Scope: "country", Target: "JP", Mode: fraud.ModeShadow, StartedAt: fixture.Base(), EndsAt: fixture.Base().Add(time.Minute)}
		for _, b := range []fraud.Block{lifted, ranOut} {
			if err := e.Store.RecordFraudBlock(e.Ctx, b, history.AdminAction{Action: "fraud_block"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Store.LiftFraudBlock(e.Ctx, lifted.ID, fixture.Base().Add(10*time.Second), "console", history.AdminAction{Action: "fraud_lift"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.LiftFraudBlock(e.Ctx, lifted.ID, fixture.Base().Add(20*time.Second), "console", history.AdminAction{Action: "fraud_lift"}); err != nil {
			t.Fatal(err)
		}
		if n, err := e.Store.EndFraudBlocks(e.Ctx, fixture.Base().Add(time.Minute), 10); err != nil || n != 1 {
			t.Fatalf("EndFraudBlocks: got %d, %v; want the block that ran out", n, err)
		}
		if n, _ := e.Store.EndFraudBlocks(e.Ctx, fixture.Base().Add(2*time.Hour), 10); n != 0 {
			t.Errorf("second pass: got %d, want 0", n)
		}
		got := e.Drain(fixture.Base().Add(time.Hour))
		count := map[string]int{}
		ends := map[string]events.FraudBlockData{}
		for _, ev := range got {
			count[ev.Type]++
			if ev.Type == events.FraudBlockEnded {
				d := fixture.Payload[events.FraudBlockData](t, ev)
				ends[d.BlockID] = d
			}
		}
		if count[events.FraudBlockStarted] != 2 || count[events.FraudBlockEnded] != 4 {
			t.Errorf("got %v, want 2 started (one endpoint) and 4 ended (two endpoints)", count)
		}
		if d := ends[lifted.ID]; d.LiftedBy != "console" || d.EndedAt != events.Time(fixture.Base().Add(10*time.Second)) || d.Target != "+8190123" {
			t.Errorf("lifted: got %+v", d)
		}
		if d := ends[ranOut.ID]; d.LiftedBy != "" || d.EndedAt != events.Time(ranOut.EndsAt) || d.Mode != "shadow" {
			t.Errorf("ran out: got %+v", d)
		}
	})

}

// testEventEndpoints holds the cases of testEvents about payloads, purges and endpoints.
func testEventEndpoints(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("EveryPayloadDecodesStrictlyIntoItsType", func(t *testing.T) { testEventPayloads(t, newStore) })

	t.Run("DeliveredAndParkedEventsArePurgedPendingOnesStay", func(t *testing.T) { testEventRetention(t, newStore) })

	t.Run("DeletingAnAppDeletesItsEndpointsOnly", func(t *testing.T) {
		e := fixture.New(t, newStore)
		app := fixture.NewApp(fixture.AppA)
		if err := e.Store.CreateApp(e.Ctx, app, fixture.Audit(apps.ActionAppCreate)); err != nil {
			t.Fatalf("CreateApp: %v", err)
		}
		e.Subscribe(fixture.AppA, events.VerificationCreated)
		kept := e.Subscribe(otp.DefaultAppID, events.VerificationCreated)
		if err := e.Store.DeleteApp(e.Ctx, fixture.AppA, fixture.Base(), fixture.Audit(apps.ActionAppDelete)); err != nil {
			t.Fatalf("DeleteApp: %v", err)
		}
		if list, err := e.Store.Endpoints(e.Ctx, fixture.AppA); err != nil || len(list) != 0 {
			t.Errorf("deleted app's endpoints: got %+v, %v; want none", list, err)
		}
		if list, err := e.Store.Endpoints(e.Ctx, otp.DefaultAppID); err != nil || len(list) != 1 || list[0].ID != kept {
			t.Errorf("other app's endpoints: got %+v, %v; want %s", list, err, kept)
		}
	})

	t.Run("EndpointsArePerAppAndTakeTheirEventsAlong", func(t *testing.T) {
		e := fixture.New(t, newStore)
		ep := e.Subscribe(otp.DefaultAppID, events.VerificationCreated)
		e.Subscribe(otherApp, events.VerificationCreated)
		list, err := e.Store.Endpoints(e.Ctx, otp.DefaultAppID)
		if err != nil || len(list) != 1 || list[0].ID != ep || !slices.Equal(list[0].Types, []string{events.VerificationCreated}) {
			t.Fatalf("Endpoints: got %+v, %v", list, err)
		}
		e.Send(fixture.Params("+15550100008", "777777", fixture.Base()))
		if err := e.Store.DeleteEndpoint(e.Ctx, otherApp, ep, history.AdminAction{Action: "webhook_deleted"}); err == nil {
			t.Error("DeleteEndpoint through another app: got nil, want not found")
		}
		if err := e.Store.DeleteEndpoint(e.Ctx, otp.DefaultAppID, ep, history.AdminAction{Action: "webhook_deleted"}); err != nil {
			t.Fatalf("DeleteEndpoint: %v", err)
		}
		if _, err := e.Store.Endpoint(e.Ctx, otp.DefaultAppID, ep); err == nil {
			t.Error("Endpoint after delete: got nil, want not found")
		}
		if got := e.Drain(fixture.Base().Add(time.Minute)); len(got) != 0 {
			t.Errorf("after delete: got %v, want nothing", fixture.Types(got))
		}
		if at, ok, err := e.Store.OldestPending(e.Ctx); err != nil || ok {
			t.Errorf("OldestPending: got %v, %v, %v; want none", at, ok, err)
		}
	})
}
