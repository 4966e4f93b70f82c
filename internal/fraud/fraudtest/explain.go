package fraudtest

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/storetest/fixture"
)

// explanation is a fraud explanation with fractional figures, as decayed counts are.
func explanation(action string) *rate.FraudExplanation {
	return &rate.FraudExplanation{
		Signal: rate.SignalRecent, Scope: rate.ScopePrefix, Key: "+8190123", Action: action, Level: 3,
		Figures: rate.FraudFigures{
			RecentSends: 12.37, RecentApprovals: 0.25, RecentUnapproved: 12.12, RecentConversion: 0.02,
			BaselineConversion: 0.6, LongSends: 40.5, LongApprovals: 20.25, LongUnapproved: 20.25,
			LongConversion: 0.5, LongBaseline: 0.52, Ratio: 0.3, Threshold: 0.18, Floor: 10,
			VolumeSeen: 12.37, VolumeExpected: 3.5, VolumeFloor: 30,
		},
	}
}

func testFraudExplained(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("RefusedSendsKeepWhyAndSendBlockedCarriesIt", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Subscribe(otp.DefaultAppID, events.SendBlocked)
		why := explanation(rate.FraudTripped)
		explained, plain := fixture.NewID(), fixture.NewID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: explained, Phone: "+819012345678", ClientIP: "192.0.2.9", Status: otp.SendBlocked,
			Reason: "fraud_guard prefix +8190123", Fraud: why, Time: fixture.Base()})
		e.Denied.RecordDenied(otp.DeniedSend{ID: plain, Phone: "+819012345679", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base()})
		e.MustFlush()
		if got := e.SendRow(explained).Fraud; !reflect.DeepEqual(got, why) {
			t.Errorf("explained row: got %+v, want %+v", got, why)
		}
		if got := e.SendRow(plain).Fraud; got != nil {
			t.Errorf("plain row: got %+v, want none", got)
		}
		got := e.Drain(fixture.Base().Add(time.Minute))
		if len(got) != 2 {
			t.Fatalf("got %d events, want 2", len(got))
		}
		for _, ev := range got {
			d := fixture.Payload[events.BlockedData](t, ev)
			switch d.SendID {
			case explained:
				if !reflect.DeepEqual(d.Fraud, events.NewFraudData(why)) {
					t.Errorf("send.blocked fraud: got %+v, want %+v", d.Fraud, events.NewFraudData(why))
				}
			case plain:
				if d.Fraud != nil || jsonHas(ev.Data, "fraud") {
					t.Errorf("send.blocked of a rule's refusal: got fraud %s, want none", ev.Data)
				}
			}
		}
	})

	t.Run("AdmittedSendsKeepWhyAndTheTestMark", func(t *testing.T) {
		e := fixture.New(t, newStore)
		passed := fixture.Params("+819012345678", "111111", fixture.Base())
		passed.Fraud = explanation(rate.FraudPassed)
		test := fixture.Params("+15005550006", "123456", fixture.Base().Add(time.Second))
		test.Test = true
		plain := fixture.Params("+819012345679", "222222", fixture.Base().Add(2*time.Second))
		for _, p := range []otp.BeginSend{passed, test, plain} {
			e.Send(p)
		}
		if got := e.SendRow(passed.SendID); !reflect.DeepEqual(got.Fraud, passed.Fraud) || got.Test {
			t.Errorf("passed: got fraud %+v, test %v; want the explanation, no test", got.Fraud, got.Test)
		}
		if got := e.SendRow(test.SendID); got.Fraud != nil || !got.Test {
			t.Errorf("test number: got fraud %+v, test %v; want no explanation, test", got.Fraud, got.Test)
		}
		if got := e.SendRow(plain.SendID); got.Fraud != nil || got.Test {
			t.Errorf("plain: got fraud %+v, test %v; want neither", got.Fraud, got.Test)
		}
		// A resend the store must first learn the pending verification's id for.
		again := fixture.Params("+15005550006", "123456", fixture.Base().Add(3*time.Second))
		again.Test = true
		if st := e.Send(again); st.Created {
			t.Errorf("resend: got %+v, want it counted on the pending verification", st)
		}
		d, err := e.Store.VerificationDetail(e.Ctx, e.SendRow(test.SendID).VerificationID)
		if err != nil || len(d.Sends) != 2 || !d.Sends[0].Test || !d.Sends[1].Test {
			t.Errorf("verification detail: got %+v, %v; want both its sends marked test", d.Sends, err)
		}
	})

	t.Run("ChallengedSendsAreListedNewestFirst", func(t *testing.T) {
		e := fixture.New(t, newStore)
		passed := fixture.Params("+819012345678", "111111", fixture.Base())
		passed.Fraud = explanation(rate.FraudPassed)
		e.Send(passed)
		challenged := fixture.NewID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: challenged, Phone: "+819012345670", Status: otp.SendBlocked,
			Reason: "challenge prefix +8190123", Fraud: explanation(rate.FraudChallenged), Time: fixture.Base().Add(time.Second)})
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819012345671", Status: otp.SendBlocked,
			Reason: "fraud_guard prefix +8190123", Fraud: explanation(rate.FraudBlocked), Time: fixture.Base().Add(2 * time.Second)})
		shadow := fixture.Params("+819012345672", "222222", fixture.Base().Add(3*time.Second))
		shadow.Fraud = explanation(rate.FraudShadow)
		e.Send(shadow)
		e.MustFlush()
		got, err := e.Store.ChallengedSends(e.Ctx, 10)
		if err != nil || len(got) != 2 || got[0].ID != challenged || got[1].ID != passed.SendID {
			t.Fatalf("got %+v, %v; want the challenged and the passed send, newest first", got, err)
		}
		if got[0].Fraud == nil || got[0].Fraud.Action != rate.FraudChallenged {
			t.Errorf("challenged: got %+v, want its explanation", got[0].Fraud)
		}
		if got, err := e.Store.ChallengedSends(e.Ctx, 1); err != nil || len(got) != 1 || got[0].ID != challenged {
			t.Errorf("limit 1: got %+v, %v; want the newest", got, err)
		}
	})

	t.Run("BlocksKeepWhyTheyStarted", func(t *testing.T) {
		e := fixture.New(t, newStore)
		why := explanation(rate.FraudTripped)
		b := fraud.Block{ID: fixture.NewID(), Scope: rate.ScopePrefix, Target: "+8190123", Mode: fraud.ModeEnforce, Reason: why.Summary(),
			Why: why, StartedAt: fixture.Base(), EndsAt: fixture.Base().Add(time.Hour)}
		old := fraud.Block{ID: fixture.NewID(), Scope: rate.ScopeCountry, Target: "JP", Mode: fraud.ModeShadow, Reason: "tripped",
			StartedAt: fixture.Base().Add(-time.Minute), EndsAt: fixture.Base().Add(time.Hour)}
		for _, x := range []fraud.Block{b, old} {
			if err := e.Store.RecordFraudBlock(e.Ctx, x, history.AdminAction{Action: fraud.ActionBlockStarted}); err != nil {
				t.Fatalf("RecordFraudBlock: %v", err)
			}
		}
		got, err := e.Store.FraudBlocks(e.Ctx, fraud.BlockFilter{Now: fixture.Base()})
		if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0].Why, why) || got[1].Why != nil {
			t.Fatalf("got %+v, %v; want the new block with its why and the old one without", got, err)
		}
		lifted, err := e.Store.LiftFraudBlock(e.Ctx, b.ID, fixture.Base().Add(time.Second), "console", history.AdminAction{Action: fraud.ActionBlockLifted})
		if err != nil || !reflect.DeepEqual(lifted.Why, why) {
			t.Errorf("lifted: got %+v, %v; want its why kept", lifted.Why, err)
		}
	})
}

// jsonHas reports whether the JSON object data has the field name.
func jsonHas(data []byte, name string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	_, ok := m[name]
	return ok
}
