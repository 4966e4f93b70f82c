package spend_test

import (
	"testing"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

func TestFence(t *testing.T) {
	t.Run("BudgetsWithoutACountryAreFencedByDefault", func(t *testing.T) {
		c := spend.Config{Currency: "USD",
			Prices: []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.05"}},
			Budgets: []spend.Budget{
				{Name: "all", Daily: "20", Mode: rate.BudgetEnforce},
				{Name: "watch", Monthly: "300", Mode: rate.BudgetEnforce, Fence: spend.FenceShadow, FenceHeadroom: 2, FenceYoung: 10},
				{Name: "open", Daily: "20", Mode: rate.BudgetEnforce, Fence: spend.FenceOff},
				{Name: "uz", Country: "UZ", Daily: "5", Mode: rate.BudgetEnforce},
				{Name: "mine", App: app, Daily: "10", Mode: rate.BudgetEnforce},
				{Name: "mine-uz", App: app, Country: "UZ", Daily: "2", Mode: rate.BudgetEnforce},
			}}
		s, _ := newService(t, c)
		now := time.Date(2030, 1, 31, 16, 0, 0, 0, time.UTC)
		q := s.Quote(otp.SpendQuery{AppID: app, Channel: "sms", Region: "UZ", Address: "+998901234567", Segments: 1, Now: now})
		got := map[string]rate.Budget{}
		for _, l := range q.Limits {
			got[l.Budget.Name] = *l.Budget
		}
		if b := got["all"]; b.Fence != rate.BudgetEnforce || b.Country != "UZ" || b.Headroom != 3 || b.YoungFloor != 1_000_000 || b.Window != 24*time.Hour {
			t.Errorf("all: got %+v, want fenced for UZ with headroom 3, young countries 5 %% (1.00), a day's window", b)
		}
		if b := got["watch"]; b.Fence != rate.BudgetShadow || b.Headroom != 2 || b.YoungFloor != 30_000_000 || b.Window != 31*24*time.Hour {
			t.Errorf("watch: got %+v, want a shadow fence, headroom 2, young countries 10 %% (30.00), January's window", b)
		}
		if b := got["open"]; b.Fence != "" {
			t.Errorf("open: got fence %q, want none (off)", b.Fence)
		}
		if b := got["mine"]; b.Fence != rate.BudgetEnforce || b.Country != "UZ" || b.Headroom != 3 || b.YoungFloor != 500_000 {
			t.Errorf("mine: got %+v, want an app's budget fenced as a global one, young countries 5 %% (0.50)", b)
		}
		for _, name := range []string{"uz", "mine-uz"} {
			if b := got[name]; b.Fence != "" {
				t.Errorf("%s: got fence %q, want none: a country's budget is not shared out", name, b.Fence)
			}
		}
		// Email has no country: nothing to fence by.
		q = s.Quote(otp.SpendQuery{AppID: app, Channel: "email", Address: "a@example.com", Segments: 1, Now: now})
		for _, l := range q.Limits {
			if l.Budget.Fence != "" {
				t.Errorf("email: got %s fenced, want none", l.Key)
			}
		}
	})

	t.Run("TheYoungCountriesMaySpendOneSendAtLeast", func(t *testing.T) {
		// 5 % of a cap of 0.20 is 0.01, less than one send at 0.05: a new deployment with a
		// small cap would refuse its first user, whose approval would have earned a share.
		c := spend.Config{Currency: "USD",
			Prices:  []spend.PriceText{{Channel: "sms", Country: "*", Price: "0.05"}},
			Budgets: []spend.Budget{{Name: "small", Daily: "0.20", Mode: rate.BudgetEnforce}}}
		s, _ := newService(t, c)
		q := s.Quote(otp.SpendQuery{AppID: app, Channel: "sms", Region: "UZ", Address: "+998901234567", Segments: 1,
			Now: time.Date(2030, 1, 31, 16, 0, 0, 0, time.UTC)})
		if len(q.Limits) != 1 || q.Limits[0].Budget.YoungFloor != 50_000 {
			t.Fatalf("got limits %+v, want the young countries' floor raised to one send (0.05)", q.Limits)
		}
	})

	t.Run("BadSettingsAreNamed", func(t *testing.T) {
		c := spend.Config{Currency: "USD", Prices: []spend.PriceText{}, Budgets: []spend.Budget{
			{Name: "a", Daily: "1", Mode: rate.BudgetEnforce, Fence: "maybe", FenceHeadroom: 0.5, FenceYoung: 101},
		}}
		f := c.Validate()
		for _, field := range []string{"budgets[0].fence", "budgets[0].fence_headroom", "budgets[0].fence_young"} {
			if f[field] == "" {
				t.Errorf("got %v, want %s named", f, field)
			}
		}
	})
}
