package historytest

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/fixture"
)

func testAdmin(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ActionsAreListedNewestFirst", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for i, target := range []string{"phone:+819012345678", "ip:192.0.2.1", "ip:2001:db8::/64"} {
			a := history.AdminAction{Action: "limit_reset", Target: target, Detail: "by console", Time: fixture.Base().Add(time.Duration(i) * time.Minute)}
			if err := e.Store.RecordAdminAction(e.Ctx, a); err != nil {
				t.Fatalf("RecordAdminAction: %v", err)
			}
		}
		got, err := e.Store.AdminActions(e.Ctx, 2)
		if err != nil {
			t.Fatalf("AdminActions: %v", err)
		}
		if len(got) != 2 || got[0].Target != "ip:2001:db8::/64" || got[1].Target != "ip:192.0.2.1" ||
			!got[0].Time.Equal(fixture.Base().Add(2*time.Minute)) || got[0].Action != "limit_reset" || got[0].Detail != "by console" || got[0].ID == 0 {
			t.Errorf("got %+v, want the two newest resets", got)
		}
	})

	t.Run("UndatedActionTakesTheClock", func(t *testing.T) {
		e := fixture.New(t, newStore)
		if err := e.Store.RecordAdminAction(e.Ctx, history.AdminAction{Action: "limit_reset"}); err != nil {
			t.Fatalf("RecordAdminAction: %v", err)
		}
		got, err := e.Store.AdminActions(e.Ctx, 0)
		if err != nil || len(got) != 1 || !got[0].Time.Equal(fixture.Base()) {
			t.Errorf("got %+v, %v; want one action at %v", got, err, fixture.Base())
		}
	})

	t.Run("ActionIsRequired", func(t *testing.T) {
		e := fixture.New(t, newStore)
		err := e.Store.RecordAdminAction(e.Ctx, history.AdminAction{Target: "ip:192.0.2.1"})
		fixture.WantInvalid(t, "RecordAdminAction", err, "action")
	})
}

func testAudit(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ActorComesFromTheContextAndFiltersSelect", func(t *testing.T) {
		e := fixture.New(t, newStore)
		alice := history.Actor{Kind: history.ActorToken, Name: "alice@example.com", ID: "op-alice", TokenID: "OT1", ClientIP: "192.0.2.7"}
		for i, c := range []struct {
			ctx    context.Context
			action string
		}{
			{history.WithActor(e.Ctx, alice), "app_update"},
			{history.WithActor(e.Ctx, history.Actor{Kind: history.ActorBreakGlass, Name: "break-glass", ClientIP: "192.0.2.8"}), "app_update"},
			{e.Ctx, "fraud_block_started"},
			{history.WithActor(e.Ctx, alice), "limit_reset"},
		} {
			a := history.AdminAction{Action: c.action, Target: "t", Before: `{"x":1}`, After: `{"x":2}`, Time: fixture.Base().Add(time.Duration(i) * time.Minute)}
			if err := e.Store.RecordAdminAction(c.ctx, a); err != nil {
				t.Fatalf("RecordAdminAction: %v", err)
			}
		}
		all, err := e.Store.AuditLog(e.Ctx, history.AuditFilter{})
		if err != nil || len(all) != 4 {
			t.Fatalf("AuditLog: got %d entries, %v; want 4", len(all), err)
		}
		got := all[0]
		if got.Action != "limit_reset" || got.ActorKind != history.ActorToken || got.Actor != alice.Name || got.ActorID != alice.ID ||
			got.TokenID != alice.TokenID || got.ClientIP != alice.ClientIP || got.Before != `{"x":1}` || got.After != `{"x":2}` {
			t.Errorf("newest entry: got %+v, want alice's reset with her token, address, before and after", got)
		}
		if all[1].ActorKind != history.ActorSystem {
			t.Errorf("entry without an actor: got kind %q, want %q", all[1].ActorKind, history.ActorSystem)
		}
		for name, c := range map[string]struct {
			f    history.AuditFilter
			want int
		}{
			"ByActorName":   {history.AuditFilter{Actor: "alice@example.com"}, 2},
			"ByActorID":     {history.AuditFilter{Actor: "op-alice"}, 2},
			"ByActorKind":   {history.AuditFilter{Actor: "break-glass"}, 1},
			"ByAction":      {history.AuditFilter{Action: "app_update"}, 2},
			"ByBoth":        {history.AuditFilter{Actor: "alice@example.com", Action: "app_update"}, 1},
			"ByTime":        {history.AuditFilter{From: fixture.Base().Add(time.Minute), To: fixture.Base().Add(3 * time.Minute)}, 2},
			"ByPage":        {history.AuditFilter{BeforeID: all[1].ID}, 2},
			"ByLimit":       {history.AuditFilter{Limit: 3}, 3},
			"NobodyMatches": {history.AuditFilter{Actor: "mallory@example.com"}, 0},
		} {
			got, err := e.Store.AuditLog(e.Ctx, c.f)
			if err != nil || len(got) != c.want {
				t.Errorf("%s: got %d entries, %v; want %d", name, len(got), err, c.want)
			}
		}
	})

	t.Run("TheAuditLogOutlivesRetention", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		fixture.SeedLifecycle(e)
		old := history.AdminAction{Action: "app_delete", Target: "app:x", Before: "name old", Time: fixture.Base().AddDate(-3, 0, 0)}
		if err := e.Store.RecordAdminAction(history.WithActor(e.Ctx, history.Actor{Kind: history.ActorBreakGlass, Name: "break-glass"}), old); err != nil {
			t.Fatalf("RecordAdminAction: %v", err)
		}
		r := e.Pass(e.Job(retention.Options{}))
		if r.Purged["sends"] == 0 {
			t.Fatalf("the pass purged no sends (%v); the test needs one that purges", r.Purged)
		}
		got, err := e.Store.AuditLog(e.Ctx, history.AuditFilter{Action: "app_delete"})
		if err != nil || len(got) != 1 || got[0].Actor != "break-glass" || !got[0].Time.Equal(old.Time) {
			t.Errorf("after the purge: got %+v, %v; want the three-year-old entry kept", got, err)
		}
	})
}
