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
