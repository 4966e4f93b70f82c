package storetest

import (
	"testing"
	"time"

	"otpgate/internal/history"
)

func testAdmin(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("ActionsAreListedNewestFirst", func(t *testing.T) {
		e := newEnv(t, newStore)
		for i, target := range []string{"phone:+819012345678", "ip:192.0.2.1", "ip:2001:db8::/64"} {
			a := history.AdminAction{Action: "limit_reset", Target: target, Detail: "by console", Time: base().Add(time.Duration(i) * time.Minute)}
			if err := e.History.RecordAdminAction(e.ctx, a); err != nil {
				t.Fatalf("RecordAdminAction: %v", err)
			}
		}
		got, err := e.History.AdminActions(e.ctx, 2)
		if err != nil {
			t.Fatalf("AdminActions: %v", err)
		}
		if len(got) != 2 || got[0].Target != "ip:2001:db8::/64" || got[1].Target != "ip:192.0.2.1" ||
			!got[0].Time.Equal(base().Add(2*time.Minute)) || got[0].Action != "limit_reset" || got[0].Detail != "by console" || got[0].ID == 0 {
			t.Errorf("got %+v, want the two newest resets", got)
		}
	})

	t.Run("UndatedActionTakesTheClock", func(t *testing.T) {
		e := newEnv(t, newStore)
		if err := e.History.RecordAdminAction(e.ctx, history.AdminAction{Action: "limit_reset"}); err != nil {
			t.Fatalf("RecordAdminAction: %v", err)
		}
		got, err := e.History.AdminActions(e.ctx, 0)
		if err != nil || len(got) != 1 || !got[0].Time.Equal(base()) {
			t.Errorf("got %+v, %v; want one action at %v", got, err, base())
		}
	})

	t.Run("ActionIsRequired", func(t *testing.T) {
		e := newEnv(t, newStore)
		err := e.History.RecordAdminAction(e.ctx, history.AdminAction{Target: "ip:192.0.2.1"})
		wantInvalid(t, "RecordAdminAction", err, "action")
	})
}
