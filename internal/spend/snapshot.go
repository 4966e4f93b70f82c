package spend

import (
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Snapshot is one immutable state of the spend configuration, compiled for sends: any
// number of them read it at once while the reloader swaps in the next.
type Snapshot struct {
	Config  Config
	Version int64
	prices  *Prices
	budgets []budget
}

// budget is a Budget compiled: its caps in micros (0: no such window) and its zone.
type budget struct {
	Budget
	daily, monthly Micros
	loc            *time.Location
}

// NewSnapshot compiles a valid config.
func NewSnapshot(c Config, version int64) *Snapshot {
	t, _ := c.table()
	s := &Snapshot{Config: c, Version: version, prices: Compile(t)}
	for _, b := range c.Budgets {
		x := budget{Budget: b}
		if id, ok := otp.CanonAppID(b.App); ok {
			x.App = id // the default app by its id, as sends name it
		}
		x.daily, _ = ParseAmount(string(b.Daily))
		x.monthly, _ = ParseAmount(string(b.Monthly))
		x.loc, _ = location(b.TimeZone)
		if x.loc == nil {
			x.loc = time.UTC
		}
		s.budgets = append(s.budgets, x)
	}
	return s
}

// Prices is the snapshot's price table.
func (s *Snapshot) Prices() *Prices { return s.prices }

// Window is one window of one budget: what it may spend and when it begins and ends.
type Window struct {
	Budget Budget
	Period string
	Cap    Micros
	// Start and End bound the window (End is when it resets), in UTC.
	Start, End time.Time
	// Key names the window in the limiter: the budget's name, the period and the start as
	// the budget's zone writes the date, such as "signup:day:20261203".
	Key string
}

// Windows returns the current windows of the budgets that apply to a send of app to
// country (empty for email, which only global and app budgets count) at now.
func (s *Snapshot) Windows(app, country string, now time.Time) []Window {
	var out []Window
	for _, b := range s.budgets {
		if b.App != "" && otp.StoredAppID(b.App) != otp.StoredAppID(app) {
			continue
		}
		if b.Country != "" && b.Country != country {
			continue
		}
		out = append(out, b.windows(now)...)
	}
	return out
}

// allWindows returns the current windows of every budget at now, in configuration order.
func (s *Snapshot) allWindows(now time.Time) []Window {
	var out []Window
	for _, b := range s.budgets {
		out = append(out, b.windows(now)...)
	}
	return out
}

// windows are the budget's current windows at now: the day's, then the month's.
func (b budget) windows(now time.Time) []Window {
	var out []Window
	local := now.In(b.loc)
	if b.daily > 0 {
		start := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, b.loc)
		out = append(out, window(b, PeriodDay, b.daily, start, start.AddDate(0, 0, 1)))
	}
	if b.monthly > 0 {
		start := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, b.loc)
		out = append(out, window(b, PeriodMonth, b.monthly, start, start.AddDate(0, 1, 0)))
	}
	return out
}

func window(b budget, period string, capacity Micros, start, end time.Time) Window {
	return Window{Budget: b.Budget, Period: period, Cap: capacity, Start: start.UTC(), End: end.UTC(),
		Key: b.Name + ":" + period + ":" + start.Format("20060102")}
}

// windowTTLMargin keeps a window's key a while past its end, so that a refund arriving
// late finds it and the console can read a window that just ended.
const windowTTLMargin = time.Hour

// Limits are the budget limits a send to country (empty for email) costing cost reserves in
// these windows at now; a fenced budget's holds the send to its country's share.
func Limits(ws []Window, country string, cost Micros, now time.Time) []rate.Limit {
	out := make([]rate.Limit, 0, len(ws))
	for _, w := range ws {
		b := &rate.Budget{
			Mode: w.Budget.Mode, Cap: w.Cap, Cost: cost, TTL: w.End.Sub(now) + windowTTLMargin,
			Name: w.Budget.Name, Period: w.Period, Resets: w.End,
		}
		if w.Budget.Fenced() && country != "" {
			b.Fence, b.Country, b.Headroom, b.Window = rate.BudgetEnforce, country, w.Budget.Headroom(), w.End.Sub(w.Start)
			if w.Budget.Fence == FenceShadow {
				b.Fence = rate.BudgetShadow
			}
			// At least one send: with a small cap the percentage can come to less than one
			// message, and a new deployment would refuse its first user, whose approval is
			// what earns a country its share.
			b.YoungFloor = max(int64(float64(w.Cap)*w.Budget.YoungShare()/100), cost)
		}
		out = append(out, rate.Limit{Scope: otp.ScopeBudget, Key: w.Key, Budget: b})
	}
	return out
}
