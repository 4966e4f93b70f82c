package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func testAppScope(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("EachAppHasItsOwnPendingVerificationPerPhone", func(t *testing.T) {
		e := fixture.New(t, newStore)
		pa, pb := fixture.Params("+819012345678", "111111", fixture.Base()), fixture.Params("+819012345678", "222222", fixture.Base())
		pa.AppID, pb.AppID = fixture.AppA, fixture.AppB
		a, b := e.Send(pa), e.Send(pb)
		if !a.Created || !b.Created || a.Verification.ID == b.Verification.ID {
			t.Fatalf("got created %v/%v ids %s/%s, want two new verifications", a.Created, b.Created, a.Verification.ID, b.Verification.ID)
		}
		if a.Verification.AppID != fixture.AppA || e.Verification(b.Verification.ID).AppID != fixture.AppB {
			t.Errorf("got apps %s/%s, want %s/%s", a.Verification.AppID, e.Verification(b.Verification.ID).AppID, fixture.AppA, fixture.AppB)
		}
		if r := e.SendRow(pb.SendID); r.AppID != fixture.AppB {
			t.Errorf("send row: got app %q, want %q", r.AppID, fixture.AppB)
		}
		def := e.Send(fixture.Params("+819012345678", "333333", fixture.Base()))
		if !def.Created || def.Verification.AppID != otp.DefaultAppID {
			t.Errorf("send without app: got created %v app %q, want a new verification of the default app", def.Created, def.Verification.AppID)
		}
	})

	t.Run("CheckFindsOnlyTheAppsVerifications", func(t *testing.T) {
		e := fixture.New(t, newStore)
		pa := fixture.Params("+819012345678", "111111", fixture.Base())
		pa.AppID = fixture.AppA
		v := e.Send(pa).Verification
		for name, ref := range map[string]otp.CheckRef{
			"ByIDOfOtherApp":    {AppID: fixture.AppB, ID: v.ID, Now: fixture.Base()},
			"ByPhoneOfOtherApp": {AppID: fixture.AppB, Phone: v.Address, Now: fixture.Base()},
			"ByIDOfDefaultApp":  {ID: v.ID, Now: fixture.Base()},
		} {
			_, _, err := e.Store.Check(e.Ctx, ref, fixture.DecideCode("111111", fixture.Base()))
			fixture.WantNotFound(t, name, err)
		}
		got, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{AppID: fixture.AppA, Phone: v.Address, Now: fixture.Base()}, fixture.DecideCode("111111", fixture.Base()))
		if err != nil || oc != otp.OutcomeApproved || got.ID != v.ID {
			t.Errorf("by phone in its app: got %s %s %v, want %s approved", got.ID, oc, err, v.ID)
		}
	})

	t.Run("CanceledIsAnOutcome", func(t *testing.T) {
		e := fixture.New(t, newStore)
		v := e.Send(fixture.Params("+819012345678", "111111", fixture.Base())).Verification
		got, oc, err := e.Store.Check(e.Ctx, otp.CheckRef{ID: v.ID, Now: fixture.Base()}, func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
			v.Status = otp.StatusCanceled
			return v, otp.OutcomeCanceled
		})
		if err != nil || oc != otp.OutcomeCanceled || got.Status != otp.StatusCanceled || !got.ClosedAt.Equal(fixture.Base()) {
			t.Fatalf("got %s %s closed %v, err %v; want canceled at %v", got.Status, oc, got.ClosedAt, err, fixture.Base())
		}
	})

	t.Run("HistoryAndStatsFilterByApp", func(t *testing.T) {
		e := fixture.New(t, newStore)
		pa := fixture.Params("+819012345678", "111111", fixture.Base())
		pa.AppID = fixture.AppA
		e.Send(pa)
		e.Send(fixture.Params("+819012345679", "222222", fixture.Base()))
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), AppID: fixture.AppA, Phone: "+819012345670", Status: otp.SendBlocked, Reason: "phone 1/1m", Time: fixture.Base()})
		e.MustFlush()
		rows, _, err := e.Store.ListSends(e.Ctx, history.SendFilter{AppID: fixture.AppA})
		if err != nil || len(rows) != 2 {
			t.Fatalf("ListSends(app A): got %d rows, err %v, want 2", len(rows), err)
		}
		for _, r := range rows {
			if r.AppID != fixture.AppA {
				t.Errorf("got a row of app %q, want only %q", r.AppID, fixture.AppA)
			}
		}
		buckets, err := e.Store.Stats(e.Ctx, fixture.Base(), time.Hour, fixture.AppA)
		if err != nil || len(buckets) == 0 {
			t.Fatalf("Stats(app A): %v", err)
		}
		b := buckets[0]
		if b.Sends != 1 || b.Blocked["phone 1/1m"] != 1 {
			t.Errorf("Stats(app A): got sends %d blocked %v, want 1 and 1", b.Sends, b.Blocked)
		}
		all, err := e.Store.Stats(e.Ctx, fixture.Base(), time.Hour, "")
		if err != nil || all[0].Sends != 2 {
			t.Errorf("Stats(all): got %+v, %v, want 2 sends", all, err)
		}
	})
}
