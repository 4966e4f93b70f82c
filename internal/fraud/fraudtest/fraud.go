package fraudtest

import (
	"errors"
	"maps"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/storetest/fixture"
)

func testFraud(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("SettingsAreSeededOnceWithoutANewVersion", func(t *testing.T) {
		e := fixture.New(t, newStore)
		st, err := e.Store.FraudState(e.Ctx)
		if err != nil || st.Values != nil || st.Version != 0 || len(st.Entries) != 0 {
			t.Fatalf("fresh: got %+v, %v; want nothing stored at version 0", st, err)
		}
		first := map[string]string{"fraud_guard": "enforce"}
		if ok, err := fraud.SeedConfig(e.Ctx, e.Store, first); !ok || err != nil {
			t.Fatalf("first seed: got %v, %v; want stored", ok, err)
		}
		if ok, err := fraud.SeedConfig(e.Ctx, e.Store, map[string]string{"fraud_guard": "off"}); ok || err != nil {
			t.Errorf("second seed: got %v, %v; want nothing stored", ok, err)
		}
		st, err = e.Store.FraudState(e.Ctx)
		if err != nil || !maps.Equal(st.Values, first) || st.Version != 0 {
			t.Errorf("got %+v, %v; want the first seed at version 0", st, err)
		}
	})

	t.Run("AnUpdateIsVersionedAndAudited", func(t *testing.T) {
		e := fixture.New(t, newStore)
		if _, err := fraud.SeedConfig(e.Ctx, e.Store, map[string]string{"fraud_guard": "enforce"}); err != nil {
			t.Fatal(err)
		}
		v, err := fraud.UpdateConfig(e.Ctx, e.Store, func(stored map[string]string) (map[string]string, history.AdminAction, error) {
			if stored["fraud_guard"] != "enforce" {
				t.Errorf("update saw %v, want the stored settings", stored)
			}
			return map[string]string{"fraud_guard": "shadow"}, fixture.Action(fraud.ActionConfigChanged), nil
		})
		if err != nil || v != 1 {
			t.Fatalf("got version %d, %v; want 1", v, err)
		}
		if got, _ := e.Store.SettingVersion(e.Ctx, fraud.SettingName); got != 1 {
			t.Errorf("FraudVersion: got %d, want 1", got)
		}
		if a := e.LastAction(); a.Action != fraud.ActionConfigChanged || !a.Time.Equal(fixture.Base()) {
			t.Errorf("audit: got %+v, want the change at %v", a, fixture.Base())
		}
		refusal := &otp.ErrInvalidRequest{Fields: map[string]string{"fraud_ratio": "bad"}}
		_, err = fraud.UpdateConfig(e.Ctx, e.Store, func(map[string]string) (map[string]string, history.AdminAction, error) {
			return nil, history.AdminAction{}, refusal
		})
		if !errors.Is(err, refusal) {
			t.Errorf("refused update: got %v, want the refusal as it is", err)
		}
		st, _ := e.Store.FraudState(e.Ctx)
		if st.Version != 1 || st.Values["fraud_guard"] != "shadow" {
			t.Errorf("after the refusal: got %+v, want version 1 unchanged", st)
		}
	})

	t.Run("ListEntriesAreAddedOnceAndRemoved", func(t *testing.T) {
		e := fixture.New(t, newStore)
		entry, err := fraud.NewListEntry("block", "", "+8190123", "premium range")
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Store.AddFraudListEntry(e.Ctx, entry, fixture.Action(fraud.ActionListAdded))
		if err != nil || got.ID == 0 || got.Kind != fraud.KindPrefix || !got.CreatedAt.Equal(fixture.Base()) {
			t.Fatalf("add: got %+v, %v; want an id, kind prefix, created now", got, err)
		}
		_, err = e.Store.AddFraudListEntry(e.Ctx, entry, fixture.Action(fraud.ActionListAdded))
		fixture.WantInvalid(t, "second add", err, "value")
		safe, _ := fraud.NewListEntry("safe", "", "+8190123", "")
		if _, err := e.Store.AddFraudListEntry(e.Ctx, safe, fixture.Action(fraud.ActionListAdded)); err != nil {
			t.Errorf("the same value on the other list: %v", err)
		}
		st, _ := e.Store.FraudState(e.Ctx)
		if st.Version != 2 || len(st.Entries) != 2 || st.Entries[0].ID != got.ID || st.Entries[0].Note != "premium range" {
			t.Errorf("got %+v, want both entries, oldest first, at version 2", st)
		}
		removed, err := e.Store.DeleteFraudListEntry(e.Ctx, got.ID, fixture.Action(fraud.ActionListRemoved))
		if err != nil || removed.Value != "+8190123" || removed.List != fraud.BlockList {
			t.Errorf("delete: got %+v, %v; want the entry", removed, err)
		}
		if a := e.LastAction(); a.Action != fraud.ActionListRemoved || a.Target != "block:prefix +8190123" {
			t.Errorf("audit: got %+v, want the removal naming the entry", a)
		}
		_, err = e.Store.DeleteFraudListEntry(e.Ctx, got.ID, fixture.Action(fraud.ActionListRemoved))
		fixture.WantNotFound(t, "second delete", err)
		if v, _ := e.Store.SettingVersion(e.Ctx, fraud.SettingName); v != 3 {
			t.Errorf("got version %d, want 3", v)
		}
	})

}

// testFraudBlocks holds the cases of testFraud about blocks, conversion and shadow findings.
func testFraudBlocks(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("BlocksAreListedAndLiftedOnce", func(t *testing.T) {
		e := fixture.New(t, newStore)
		old := fraud.Block{ID: fixture.NewID(), Scope: rate.ScopeIPNet, Target: "192.0.2.0/24", Mode: fraud.ModeEnforce,
			StartedAt: fixture.Base().Add(-13 * time.Hour), EndsAt: fixture.Base().Add(-time.Hour)}
		active := fraud.Block{ID: fixture.NewID(), Scope: rate.ScopePrefix, Target: "+8190123", Mode: fraud.ModeShadow,
			Reason: "10 unapproved sends", StartedAt: fixture.Base(), EndsAt: fixture.Base().Add(12 * time.Hour)}
		for _, b := range []fraud.Block{old, active} {
			if err := e.Store.RecordFraudBlock(e.Ctx, b, fixture.Action(fraud.ActionBlockStarted)); err != nil {
				t.Fatalf("RecordFraudBlock: %v", err)
			}
		}
		got, err := e.Store.FraudBlocks(e.Ctx, fraud.BlockFilter{Now: fixture.Base()})
		if err != nil || len(got) != 1 || got[0] != active {
			t.Fatalf("active: got %+v, %v; want %+v", got, err, active)
		}
		all, err := e.Store.FraudBlocks(e.Ctx, fraud.BlockFilter{All: true, Now: fixture.Base()})
		if err != nil || len(all) != 2 || all[0].ID != active.ID || all[1].ID != old.ID {
			t.Errorf("all: got %+v, %v; want both, newest first", all, err)
		}
		at := fixture.Base().Add(time.Hour)
		lifted, err := e.Store.LiftFraudBlock(e.Ctx, active.ID, at, "operator", fixture.Action(fraud.ActionBlockLifted))
		if err != nil || !lifted.LiftedAt.Equal(at) || lifted.LiftedBy != "operator" || lifted.Active(at) {
			t.Fatalf("lift: got %+v, %v; want lifted at %v by operator", lifted, err, at)
		}
		if a := e.LastAction(); a.Action != fraud.ActionBlockLifted || a.Target != "prefix:+8190123" || !a.Time.Equal(at) {
			t.Errorf("audit: got %+v, want the lift of the prefix at %v", a, at)
		}
		again, err := e.Store.LiftFraudBlock(e.Ctx, active.ID, at.Add(time.Hour), "someone else", fixture.Action(fraud.ActionBlockLifted))
		if err != nil || !again.LiftedAt.Equal(at) || again.LiftedBy != "operator" {
			t.Errorf("second lift: got %+v, %v; want the first lift kept", again, err)
		}
		if got, _ := e.Store.FraudBlocks(e.Ctx, fraud.BlockFilter{Now: at}); len(got) != 0 {
			t.Errorf("active after the lift: got %+v, want none", got)
		}
		_, err = e.Store.LiftFraudBlock(e.Ctx, fixture.NewID(), at, "operator", fixture.Action(fraud.ActionBlockLifted))
		fixture.WantNotFound(t, "unknown block", err)
		_, err = e.Store.LiftFraudBlock(e.Ctx, "not-a-uuid", at, "operator", fixture.Action(fraud.ActionBlockLifted))
		fixture.WantNotFound(t, "malformed id", err)
	})

	t.Run("ConversionCountsPerPrefix", func(t *testing.T) {
		e := fixture.New(t, newStore)
		since := fixture.Base()
		// Two sends to +8190111, one approved; one to +8190222 that failed; one blocked there.
		a := e.Send(fixture.Params("+819011100001", "111111", since))
		e.Send(fixture.Params("+819011100002", "222222", since.Add(time.Second)))
		e.Check(a.Verification.ID, "111111", since.Add(2*time.Second))
		f := fixture.Params("+819022200001", "333333", since)
		e.Send(f)
		if err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: f.SendID, Status: otp.SendFailed, Now: since}); err != nil {
			t.Fatal(err)
		}
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819022200002", Status: otp.SendBlocked, Reason: "fraud_guard prefix +8190222", Time: since})
		e.Send(fixture.Params("+819033300001", "444444", since.Add(-time.Minute))) // before since
		e.MustFlush()
		got, err := e.Store.FraudConversion(e.Ctx, since, 5)
		want := []fraud.PrefixCount{{Prefix: "+8190111", Sends: 2, Approvals: 1}, {Prefix: "+8190222", Blocked: 1}}
		if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("got %+v, %v; want %+v", got, err, want)
		}
	})

	t.Run("ShadowFindingsAreKeptOnSends", func(t *testing.T) {
		e := fixture.New(t, newStore)
		p := fixture.Params("+819012345678", "111111", fixture.Base())
		p.Shadow = "prefix 10/1h:shadow"
		e.Send(p)
		e.Send(fixture.Params("+819012345679", "222222", fixture.Base().Add(time.Second)))
		e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819012345670", Status: otp.SendBlocked,
			Reason: "phone 1/1m", Shadow: "fraud_guard prefix +8190123", Time: fixture.Base().Add(2 * time.Second)})
		e.MustFlush()
		if got := e.SendRow(p.SendID); got.Shadow != "prefix 10/1h:shadow" {
			t.Errorf("send row: got shadow %q, want it kept", got.Shadow)
		}
		got, err := e.Store.ShadowSends(e.Ctx, 10)
		if err != nil || len(got) != 2 || got[0].Shadow != "fraud_guard prefix +8190123" || got[1].ID != p.SendID {
			t.Errorf("got %+v, %v; want the two flagged sends, newest first", got, err)
		}
	})
}
