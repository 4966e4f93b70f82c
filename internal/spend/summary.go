package spend

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// How much the Spend page shows.
const (
	// SummaryDays is how many UTC days the per-day, per-country and per-app figures cover.
	SummaryDays = 30
	// prefixesShown and prefixDrop: the costliest prefixes (numbers without their last
	// four digits, as the fraud guard's prefixes) of the last 24 hours.
	prefixesShown = 10
	prefixDrop    = 4
)

// Summary is what the Spend page shows: spend per day, per country and per app over
// SummaryDays, each budget window's use and reset, and the costliest prefixes of 24 hours.
// Figures come from history: sends that were priced and did not fail.
type Summary struct {
	Currency  string
	Days      []Total
	Countries []Total
	Apps      []Total
	Budgets   []BudgetUse
	Prefixes  []PrefixTotal
}

// Total is the spend of one day, country or app.
type Total struct {
	Key   string
	Cost  Micros
	Sends int
}

// BudgetUse is one window of one budget as history has it now.
type BudgetUse struct {
	Window
	Spent Micros
	// Fraction is Spent / Cap.
	Fraction float64
}

// Summary gathers the Spend page as of now.
func (a *Admin) Summary(ctx context.Context, now time.Time) (Summary, error) {
	snap := a.snapshots.Snapshot()
	out := Summary{Currency: snap.prices.Currency()}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	from := today.AddDate(0, 0, 1-SummaryDays)
	days, err := a.store.SpendByDay(ctx, from, now.Add(time.Second))
	if err != nil {
		return Summary{}, err
	}
	perDay, perCountry, perApp := map[string]Total{}, map[string]Total{}, map[string]Total{}
	add := func(m map[string]Total, k string, d DayTotal) {
		t := m[k]
		t.Key, t.Cost, t.Sends = k, t.Cost+d.Cost, t.Sends+d.Sends
		m[k] = t
	}
	for _, d := range days {
		add(perDay, d.Day.Format(time.DateOnly), d)
		add(perCountry, d.Country, d)
		add(perApp, d.AppID, d)
	}
	for day := from; !day.After(today); day = day.AddDate(0, 0, 1) {
		k := day.Format(time.DateOnly)
		out.Days = append(out.Days, Total{Key: k, Cost: perDay[k].Cost, Sends: perDay[k].Sends})
	}
	out.Countries, out.Apps = costliest(perCountry), costliest(perApp)
	for _, w := range snap.allWindows(now) {
		spent, err := a.store.SpentSince(ctx, w.Start, w.Budget.App, w.Budget.Country)
		if err != nil {
			return Summary{}, err
		}
		out.Budgets = append(out.Budgets, BudgetUse{Window: w, Spent: spent, Fraction: float64(spent) / float64(w.Cap)})
	}
	if out.Prefixes, err = a.store.TopPrefixes(ctx, now.Add(-24*time.Hour), prefixDrop, prefixesShown); err != nil {
		return Summary{}, err
	}
	return out, nil
}

// costliest lists totals costliest first.
func costliest(m map[string]Total) []Total {
	out := make([]Total, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Total) int { return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Key, b.Key)) })
	return out
}
