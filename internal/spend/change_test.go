package spend_test

import (
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

func TestValidateChange(t *testing.T) {
	const app = "0190a000-0000-7000-8000-00000000000a"
	known := func(id string) bool { return id == app || id == otp.DefaultAppID }
	price := func(country, prefix string, amount spend.Amount) spend.Config {
		return spend.Config{Currency: "USD", Prices: []spend.PriceText{{Channel: "sms", Country: country, Prefix: prefix, Price: amount}}}
	}
	budget := func(b spend.Budget) spend.Config {
		b.Name, b.Mode = "b", rate.BudgetEnforce
		return spend.Config{Currency: "USD", Budgets: []spend.Budget{b}}
	}
	for _, c := range []struct {
		name  string
		c     spend.Config
		field string // "" when sound
	}{
		{"TrimmedPrice", price("GB", "", "1"), ""},
		{"PriceWithASpaceBefore", price("GB", "", " 1"), "prices[0].price"},
		{"PriceWithASpaceAfter", price("GB", "", "1 "), "prices[0].price"},
		{"PrefixInsideItsCountry", price("GB", "+4470", "1"), ""},
		{"PrefixOfAnotherCountry", price("GB", "+33", "1"), "prices[0].prefix"},
		{"PrefixShorterThanTheCallingCode", price("GB", "+4", "1"), "prices[0].prefix"},
		{"PrefixOfASharedCallingCode", price("CA", "+1604", "1"), ""},
		{"BudgetOfAKnownApp", budget(spend.Budget{App: app, Daily: "1"}), ""},
		{"BudgetOfTheDefaultApp", budget(spend.Budget{App: "default", Daily: "1"}), ""},
		{"BudgetOfNoApp", budget(spend.Budget{App: "0190a000-0000-7000-8000-00000000000b", Daily: "1"}), "budgets[0].app"},
		{"MonthlyEqualToDaily", budget(spend.Budget{Daily: "1", Monthly: "1.00"}), ""},
		{"MonthlyBelowDaily", budget(spend.Budget{Daily: "1", Monthly: "0.99"}), "budgets[0].monthly"},
		{"DailyWithASpace", budget(spend.Budget{Daily: "1 "}), "budgets[0].daily"},
		{"MonthlyWithASpace", budget(spend.Budget{Monthly: " 30"}), "budgets[0].monthly"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.c.ValidateChange(spend.Config{}, known)
			switch {
			case c.field == "" && len(f) > 0:
				t.Errorf("got %v, want none", f)
			case c.field != "" && (len(f) != 1 || f[c.field] == ""):
				t.Errorf("got %v, want %s named alone", f, c.field)
			}
			if c.field != "" {
				// Kept as an earlier version stored it, it is not refused again, and
				// loading takes it.
				if f := c.c.ValidateChange(c.c, known); len(f) > 0 {
					t.Errorf("kept as it was: got %v, want none", f)
				}
				if f := c.c.Validate(); len(f) > 0 {
					t.Errorf("loading: got %v, want none", f)
				}
			}
		})
	}
	t.Run("NoDirectoryChecksNoApp", func(t *testing.T) {
		if f := budget(spend.Budget{App: "0190a000-0000-7000-8000-00000000000b", Daily: "1"}).ValidateChange(spend.Config{}, nil); len(f) > 0 {
			t.Errorf("got %v, want none", f)
		}
	})
}
