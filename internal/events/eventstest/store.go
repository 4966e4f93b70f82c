package eventstest

import (
	"slices"
	"testing"
	"time"

	"otpgate/internal/events"
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
