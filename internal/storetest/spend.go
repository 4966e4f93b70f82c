package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

func testSpend(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("ASendKeepsItsCostAndCurrency", func(t *testing.T) {
		e := newEnv(t, newStore)
		priced := params("+819012345678", "111111", base())
		priced.Cost, priced.Currency = 163_400, "USD"
		free := params("+819012345679", "222222", base().Add(time.Second))
		resend := params("+819012345678", "333333", base().Add(2*time.Second))
		resend.Cost, resend.Currency = 81_700, "USD"
		for _, p := range []otp.BeginSend{priced, free, resend} {
			e.send(p)
		}
		for _, c := range []struct {
			id   string
			cost int64
			cur  string
		}{{priced.SendID, 163_400, "USD"}, {free.SendID, 0, ""}, {resend.SendID, 81_700, "USD"}} {
			if got := e.sendRow(c.id); got.Cost != c.cost || got.Currency != c.cur {
				t.Errorf("send %s: got cost %d %q, want %d %q", c.id, got.Cost, got.Currency, c.cost, c.cur)
			}
		}
	})

	t.Run("RefusedSendsCostNothing", func(t *testing.T) {
		e := newEnv(t, newStore)
		id := newID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: id, Phone: "+819012345678", Status: otp.SendBlocked, Reason: "budget x day", Time: base()})
		e.flush()
		if got := e.sendRow(id); got.Cost != 0 {
			t.Errorf("got cost %d, want 0", got.Cost)
		}
	})
}

func testSpendConfig(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("AChangeBumpsTheVersionAndIsAudited", func(t *testing.T) {
		e := newEnv(t, newStore)
		raw, v0, err := e.Spend.SpendConfig(e.ctx)
		if err != nil || raw != nil {
			t.Fatalf("fresh store: got %s, %v; want nothing stored", raw, err)
		}
		doc := []byte(`{"currency":"EUR","prices":[],"budgets":[]}`)
		v1, err := e.Spend.UpdateSpendConfig(e.ctx, func(stored []byte) ([]byte, history.AdminAction, error) {
			if stored != nil {
				t.Errorf("update saw %s, want nothing stored", stored)
			}
			return doc, history.AdminAction{Action: spend.ActionConfigChanged, Target: "spend:config", Detail: "currency"}, nil
		})
		if err != nil || v1 <= v0 {
			t.Fatalf("got version %d, %v; want above %d", v1, err, v0)
		}
		raw, v, err := e.Spend.SpendConfig(e.ctx)
		if err != nil || v != v1 || !jsonEqual(raw, doc) {
			t.Errorf("got %s at %d, %v; want %s at %d", raw, v, err, doc, v1)
		}
		if got, err := e.Spend.SpendVersion(e.ctx); err != nil || got != v1 {
			t.Errorf("version: got %d, %v; want %d", got, err, v1)
		}
		acts, err := e.History.AdminActions(e.ctx, 10)
		if err != nil || len(acts) == 0 || acts[0].Action != spend.ActionConfigChanged {
			t.Errorf("audit: got %+v, %v; want the change first", acts, err)
		}
	})

	t.Run("ARefusedChangeChangesNothing", func(t *testing.T) {
		e := newEnv(t, newStore)
		refusal := &otp.ErrInvalidRequest{Fields: map[string]string{"currency": "bad"}}
		_, err := e.Spend.UpdateSpendConfig(e.ctx, func([]byte) ([]byte, history.AdminAction, error) {
			return nil, history.AdminAction{}, refusal
		})
		if !errors.Is(err, refusal) {
			t.Errorf("got %v, want the refusal", err)
		}
		if raw, v, err := e.Spend.SpendConfig(e.ctx); err != nil || raw != nil || v != 0 {
			t.Errorf("got %s at %d, %v; want nothing changed", raw, v, err)
		}
	})

	t.Run("AThresholdIsWrittenOncePerWindowToItsEndpoints", func(t *testing.T) {
		e := newEnv(t, newStore)
		other := newID()
		all := e.subscribe(otp.DefaultAppID, events.BudgetThreshold)
		mine := e.subscribe(other, events.BudgetThreshold)
		e.subscribe(other, events.SendBlocked)
		global := events.BudgetThresholdData{Budget: "all", Kind: "global", Period: "day", Mode: "enforce", Threshold: 50,
			Spent: "0.50", Cap: "1.00", Currency: "USD", WindowStart: events.Time(base()), ResetsAt: events.Time(base().Add(24 * time.Hour))}
		app := global
		app.Budget, app.Kind, app.AppID = "mine", "app", other
		for range 2 {
			for _, c := range []struct {
				key string
				d   events.BudgetThresholdData
			}{{"all:day:20300101:50", global}, {"mine:day:20300101:50", app}} {
				if err := e.Spend.RecordBudgetThreshold(e.ctx, c.key, c.d, base()); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := e.drain(base().Add(time.Minute))
		per := map[string]int{}
		for _, ev := range got {
			d := payload[events.BudgetThresholdData](t, ev)
			per[d.Budget]++
			if ev.Type != events.BudgetThreshold || d.Threshold != 50 || d.Cap != "1.00" {
				t.Errorf("got %s %+v, want the threshold as recorded", ev.Type, d)
			}
		}
		// The global budget goes to both endpoints subscribed to the type, the app's to its own.
		if per["all"] != 2 || per["mine"] != 1 || len(got) != 3 {
			t.Errorf("got %v in %d events, want all twice and mine once (endpoints %s, %s)", per, len(got), all, mine)
		}
	})
}

// jsonEqual reports whether two JSON documents hold the same values, whatever their spacing
// and key order (Postgres keeps jsonb in its own).
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
