package admin

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"otpgate/internal/spend"
)

// spendPage is the data of spend.html: the figures as text, bars as percentages of the
// costliest day.
type spendPage struct {
	Currency  string
	Days      []spendRow
	Countries []spendRow
	Apps      []spendRow
	Budgets   []spendBudgetRow
	Prefixes  []spendRow
	Total     string
	// Editor is the configuration, editable by admins.
	Editor spendEditor
}

// spendRow is one day, country, app or prefix.
type spendRow struct {
	Key, Cost string
	Sends     int
	// Bar is the row's cost as a percentage of the largest in its table.
	Bar int
}

// spendBudgetRow is one window of one budget.
type spendBudgetRow struct {
	Name, Kind, Scope, Period, Mode string
	Spent, Cap                      string
	Percent                         int
	Over                            bool
	ResetsAt                        time.Time
	// Fence says how the window is shared out by country.
	Fence string
}

// handleSpendPage shows spend per day, per country and per app, each budget's use and
// reset, the costliest prefixes of the last 24 hours, and the configuration.
func handleSpendPage(log *slog.Logger, view *adminView, s spend.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := loadSpendPage(r, s, p)
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		data.Editor.Done = spendDoneText(r.URL.Query().Get("done"))
		renderSpend(w, r, view, http.StatusOK, data)
	})
}

// loadSpendPage gathers the page as of now, with the stored configuration.
func loadSpendPage(r *http.Request, s spend.AdminService, p adminParams) (spendPage, error) {
	sum, err := s.Summary(r.Context(), p.now())
	if err != nil {
		return spendPage{}, err
	}
	c, version, err := s.Config(r.Context())
	if err != nil {
		return spendPage{}, err
	}
	data := toSpendPage(sum)
	data.Editor = newSpendEditor(r.Context(), c, version, s.Running().Version)
	return data, nil
}

// renderSpend renders the page with status.
func renderSpend(w http.ResponseWriter, r *http.Request, view *adminView, status int, data spendPage) {
	view.render(w, r, status, "spend", pageData{Title: "Spend", Nav: "spend", Data: data})
}

func toSpendPage(s spend.Summary) spendPage {
	out := spendPage{Currency: s.Currency}
	var total spend.Micros
	for _, d := range s.Days {
		total += d.Cost
	}
	out.Total = spend.FormatAmount(total)
	out.Days = spendRows(s.Days)
	out.Countries = spendRows(s.Countries)
	out.Apps = spendRows(s.Apps)
	prefixes := make([]spend.Total, len(s.Prefixes))
	for i, x := range s.Prefixes {
		prefixes[i] = spend.Total{Key: x.Prefix + " (" + x.Country + ")", Cost: x.Cost, Sends: x.Sends}
	}
	out.Prefixes = spendRows(prefixes)
	for _, b := range s.Budgets {
		scope := "every send"
		switch {
		case b.Budget.App != "" && b.Budget.Country != "":
			scope = "app " + b.Budget.App + " in " + b.Budget.Country
		case b.Budget.App != "":
			scope = "app " + b.Budget.App
		case b.Budget.Country != "":
			scope = b.Budget.Country
		}
		out.Budgets = append(out.Budgets, spendBudgetRow{
			Name: b.Budget.Name, Kind: b.Budget.Kind(), Scope: scope, Period: b.Period, Mode: b.Budget.Mode,
			Spent: spend.FormatAmount(b.Spent), Cap: spend.FormatAmount(b.Cap),
			Percent: int(b.Fraction * 100), Over: b.Spent >= b.Cap, ResetsAt: b.End, Fence: fenceText(b.Budget, b.Cap),
		})
	}
	return out
}

// spendRows renders totals with bars relative to the largest.
func spendRows(ts []spend.Total) []spendRow {
	var top spend.Micros
	for _, t := range ts {
		top = max(top, t.Cost)
	}
	out := make([]spendRow, len(ts))
	for i, t := range ts {
		out[i] = spendRow{Key: t.Key, Cost: spend.FormatAmount(t.Cost), Sends: t.Sends}
		if top > 0 {
			out[i].Bar = int(t.Cost * 100 / top)
		}
	}
	return out
}

// fenceText says how a budget's window of capacity is shared out by country.
func fenceText(b spend.Budget, capacity spend.Micros) string {
	switch {
	case b.Country != "":
		return "– (one country's)"
	case !b.Fenced():
		return "not shared out (fence off)"
	}
	headroom, young := b.Headroom(), b.YoungShare()
	s := fmt.Sprintf("by country: %g× approved spend; countries without approved history %g %% (%s) together",
		headroom, young, spend.FormatAmount(spend.Micros(float64(capacity)*young/100)))
	if b.Fence == spend.FenceShadow {
		s += " (shadow: reported, not refused)"
	}
	return s
}
