package spendtest

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
	"otpgate/internal/spend"
	"otpgate/internal/storetest/fixture"
)

func testSpend(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ASendKeepsItsCostAndCurrency", func(t *testing.T) {
		e := fixture.New(t, newStore)
		priced := fixture.Params("+819012345678", "111111", fixture.Base())
		priced.Cost, priced.Currency = 163_400, "USD"
		free := fixture.Params("+819012345679", "222222", fixture.Base().Add(time.Second))
		resend := fixture.Params("+819012345678", "333333", fixture.Base().Add(2*time.Second))
		resend.Cost, resend.Currency = 81_700, "USD"
		for _, p := range []otp.BeginSend{priced, free, resend} {
			e.Send(p)
		}
		for _, c := range []struct {
			id   string
			cost int64
			cur  string
		}{{priced.SendID, 163_400, "USD"}, {free.SendID, 0, ""}, {resend.SendID, 81_700, "USD"}} {
			if got := e.SendRow(c.id); got.Cost != c.cost || got.Currency != c.cur {
				t.Errorf("send %s: got cost %d %q, want %d %q", c.id, got.Cost, got.Currency, c.cost, c.cur)
			}
		}
	})

	t.Run("RefusedSendsCostNothing", func(t *testing.T) {
		e := fixture.New(t, newStore)
		id := fixture.NewID()
		e.Denied.RecordDenied(otp.DeniedSend{ID: id, Phone: "+819012345678", Status: otp.SendBlocked, Reason: "budget x day", Time: fixture.Base()})
		e.MustFlush()
		if got := e.SendRow(id); got.Cost != 0 {
			t.Errorf("got cost %d, want 0", got.Cost)
		}
	})
}

func testSpendConfig(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("AChangeBumpsTheVersionAndIsAudited", func(t *testing.T) {
		e := fixture.New(t, newStore)
		raw, v0, err := e.Store.Setting(e.Ctx, spend.SettingName)
		if err != nil || raw != nil {
			t.Fatalf("fresh store: got %s, %v; want nothing stored", raw, err)
		}
		// A fenced budget's settings are kept as written.
		doc := []byte(`{"currency":"EUR","prices":[],"budgets":[{"name":"cap","daily":"20","mode":"enforce","fence":"shadow","fence_headroom":2.5,"fence_young":4}]}`)
		v1, err := e.Store.UpdateSetting(e.Ctx, spend.SettingName, func(stored []byte) ([]byte, history.AdminAction, error) {
			if stored != nil {
				t.Errorf("update saw %s, want nothing stored", stored)
			}
			return doc, history.AdminAction{Action: spend.ActionConfigChanged, Target: "spend:config", Detail: "currency"}, nil
		})
		if err != nil || v1 <= v0 {
			t.Fatalf("got version %d, %v; want above %d", v1, err, v0)
		}
		raw, v, err := e.Store.Setting(e.Ctx, spend.SettingName)
		if err != nil || v != v1 || !fixture.JSONEqual(raw, doc) {
			t.Errorf("got %s at %d, %v; want %s at %d", raw, v, err, doc, v1)
		}
		if got, err := e.Store.SettingVersion(e.Ctx, spend.SettingName); err != nil || got != v1 {
			t.Errorf("version: got %d, %v; want %d", got, err, v1)
		}
		acts, err := e.Store.AdminActions(e.Ctx, 10)
		if err != nil || len(acts) == 0 || acts[0].Action != spend.ActionConfigChanged {
			t.Errorf("audit: got %+v, %v; want the change first", acts, err)
		}
	})

	t.Run("ARefusedChangeChangesNothing", func(t *testing.T) {
		e := fixture.New(t, newStore)
		refusal := &otp.ErrInvalidRequest{Fields: map[string]string{"currency": "bad"}}
		_, err := e.Store.UpdateSetting(e.Ctx, spend.SettingName, func([]byte) ([]byte, history.AdminAction, error) {
			return nil, history.AdminAction{}, refusal
		})
		if !errors.Is(err, refusal) {
			t.Errorf("got %v, want the refusal", err)
		}
		if raw, v, err := e.Store.Setting(e.Ctx, spend.SettingName); err != nil || raw != nil || v != 0 {
			t.Errorf("got %s at %d, %v; want nothing changed", raw, v, err)
		}
	})

	t.Run("AThresholdIsWrittenOncePerWindowToItsEndpoints", func(t *testing.T) {
		e := fixture.New(t, newStore)
		other := fixture.NewID()
		all := e.Subscribe(otp.DefaultAppID, events.BudgetThreshold)
		mine := e.Subscribe(other, events.BudgetThreshold)
		e.Subscribe(other, events.SendBlocked)
		global := events.BudgetThresholdData{Budget: "all", Kind: "global", Period: "day", Mode: "enforce", Threshold: 50,
			Spent: "0.50", Cap: "1.00", Currency: "USD", WindowStart: events.Time(fixture.Base()), ResetsAt: events.Time(fixture.Base().Add(24 * time.Hour))}
		app := global
		app.Budget, app.Kind, app.AppID = "mine", "app", other
		for range 2 {
			for _, c := range []struct {
				key string
				d   events.BudgetThresholdData
			}{{"all:day:20300101:50", global}, {"mine:day:20300101:50", app}} {
				if err := e.Store.RecordBudgetThreshold(e.Ctx, c.key, c.d, fixture.Base()); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := e.Drain(fixture.Base().Add(time.Minute))
		per := map[string]int{}
		for _, ev := range got {
			d := fixture.Payload[events.BudgetThresholdData](t, ev)
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

func testSpendFigures(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("ReadsTheSameBeforeAndAfterThePurge", func(t *testing.T) { testSpendRetention(t, newStore) })
	t.Run("SumsPerDayAppCountryAndPrefixLeaveOutFailedSends", func(t *testing.T) {
		e := fixture.New(t, newStore)
		app := fixture.NewID()
		day1, day2 := fixture.Base(), fixture.Base().Add(24*time.Hour)
		var sends []otp.BeginSend
		add := func(appID, phone, country string, at time.Time, cost int64) otp.BeginSend {
			p := fixture.Params(phone, "111111", at)
			p.AppID, p.Country, p.Cost, p.Currency = appID, country, cost, "USD"
			e.Send(p)
			sends = append(sends, p)
			return p
		}
		add("", "+819012340001", "JP", day1, 80_000)
		add("", "+819012340002", "JP", day1.Add(time.Minute), 80_000)
		add(app, "+998901230001", "UZ", day1.Add(2*time.Minute), 290_000)
		failed := add(app, "+998901230002", "UZ", day1.Add(3*time.Minute), 290_000)
		add(app, "+998901239999", "UZ", day2, 290_000)
		add("", "+12025550123", "US", day2.Add(time.Minute), 0) // nothing priced it
		e.FinishAs(failed, otp.SendFailed)
		e.MustFlush()

		days, err := e.Store.SpendByDay(e.Ctx, day1, day2.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		d1 := time.Date(day1.Year(), day1.Month(), day1.Day(), 0, 0, 0, 0, time.UTC)
		want := []spend.DayTotal{
			{Day: d1, AppID: otp.DefaultAppID, Country: "JP", Cost: 160_000, Sends: 2},
			{Day: d1, AppID: app, Country: "UZ", Cost: 290_000, Sends: 1},
			{Day: d1.Add(24 * time.Hour), AppID: app, Country: "UZ", Cost: 290_000, Sends: 1},
		}
		slices.SortFunc(want, func(a, b spend.DayTotal) int {
			return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.AppID, b.AppID), cmp.Compare(a.Country, b.Country))
		})
		if !reflect.DeepEqual(days, want) {
			t.Errorf("per day: got %+v, want %+v", days, want)
		}
		top, err := e.Store.TopPrefixes(e.Ctx, day1, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		wantTop := []spend.PrefixTotal{{Prefix: "+99890123", Country: "UZ", Cost: 580_000, Sends: 2}, {Prefix: "+81901234", Country: "JP", Cost: 160_000, Sends: 2}}
		if !reflect.DeepEqual(top, wantTop) {
			t.Errorf("top prefixes: got %+v, want %+v", top, wantTop)
		}
		for _, c := range []struct {
			from         time.Time
			app, country string
			want         int64
		}{{day1, "", "", 740_000}, {day1, app, "", 580_000}, {day1, "", "JP", 160_000}, {day2, app, "UZ", 290_000}, {day2, "", "JP", 0}} {
			if got, err := e.Store.SpentSince(e.Ctx, c.from, c.app, c.country); err != nil || got != c.want {
				t.Errorf("spent since %v for %q %q: got %d, %v; want %d", c.from, c.app, c.country, got, err, c.want)
			}
		}
	})
}

// testSpendRetention is part of testSpendFigures: spend read across the rolled-up boundary
// is the same before and after the purge of the raw rows it was read from.
func testSpendRetention(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	e := fixture.New(t, newStore)
	e.Need(fixture.Retention)
	// Three days before base, a send every 70 minutes, in two apps and three countries; every
	// fifth failed, and every seventh priced at nothing.
	start := fixture.Base().Add(-72 * time.Hour).Add(11 * time.Minute)
	var oldCost int64
	for i := 0; start.Add(time.Duration(i) * 70 * time.Minute).Before(fixture.Base().Add(-time.Hour)); i++ {
		at := start.Add(time.Duration(i) * 70 * time.Minute)
		country, phone := [3]string{"JP", "UZ", "US"}[i%3], [3]string{"+81901%07d", "+99890%07d", "+1202%07d"}[i%3]
		p := fixture.Params(fmt.Sprintf(phone, i), "111111", at)
		p.AppID, p.NewVerificationID, p.SendID = [2]string{otp.DefaultAppID, fixture.AppB}[i%2], fixture.IDAt(at), fixture.IDAt(at)
		p.Country, p.Cost, p.Currency = country, int64(10_000*(1+i%4)), "USD"
		if i%7 == 0 {
			p.Cost = 0
		}
		e.Send(p)
		if i%5 == 0 {
			e.FinishAs(p, otp.SendFailed)
		} else {
			e.FinishAs(p, otp.SendSent)
			if at.Before(fixture.Horizon()) {
				oldCost += p.Cost
			}
		}
	}
	e.MustFlush()
	if oldCost == 0 {
		t.Fatal("seed: want spend before the horizon")
	}

	type figures struct {
		days  []spend.DayTotal
		spent []spend.Micros
	}
	// Windows start at whole hours, where rolled-up hours count the same as raw rows.
	windows := []struct {
		from         time.Time
		app, country string
	}{
		{fixture.Base().Add(-96 * time.Hour), "", ""}, {fixture.Base().Add(-96 * time.Hour), fixture.AppB, ""},
		{fixture.Base().Add(-60 * time.Hour), "", "UZ"}, {fixture.Base().Add(-60 * time.Hour), otp.DefaultAppID, "JP"},
		{fixture.Horizon(), "", ""}, {fixture.Base().Add(-24 * time.Hour), fixture.AppB, "US"},
	}
	read := func() figures {
		t.Helper()
		var f figures
		var err error
		if f.days, err = e.Store.SpendByDay(e.Ctx, fixture.Base().Add(-96*time.Hour), fixture.Base().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, w := range windows {
			got, err := e.Store.SpentSince(e.Ctx, w.from, w.app, w.country)
			if err != nil {
				t.Fatal(err)
			}
			f.spent = append(f.spent, got)
		}
		return f
	}
	before := read()
	if all, sinceHorizon := before.spent[0], before.spent[4]; int64(all-sinceHorizon) != oldCost {
		t.Fatalf("seed: got %d spent in all and %d since the horizon, want %d between", all, sinceHorizon, oldCost)
	}
	if r := e.Pass(e.Job(retention.Options{})); r.Purged["sends"] == 0 || r.Rolled == 0 {
		t.Fatalf("got %+v, want hours rolled up and sends purged", r)
	}
	after := read()
	if !reflect.DeepEqual(after.days, before.days) {
		t.Errorf("per day after the purge: got %+v, want %+v as before", after.days, before.days)
	}
	for i, w := range windows {
		if after.spent[i] != before.spent[i] {
			t.Errorf("spent since %v for %q %q after the purge: got %d, want %d as before", w.from, w.app, w.country, after.spent[i], before.spent[i])
		}
	}
}
