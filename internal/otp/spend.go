package otp

import (
	"context"
	"time"

	"otpgate/internal/rate"
)

// ScopeBudget is the limiter scope of budgets: each window of each budget is one key.
const ScopeBudget = "budget"

// Spend is the spend step of sends: what a send is estimated to cost and the budgets it
// reserves that cost in. internal/spend implements it over the live price table and
// budgets; the domain only asks, so prices, budgets and their reloading stay out of it.
type Spend interface {
	// Quote prices a send and returns the budget limits to add to its policy, each window
	// of each matching budget one limit reserving the cost.
	Quote(q SpendQuery) Quote
	// Decided reports a send's decision on its budgets (thresholds crossed, what shadow
	// budgets would have refused) for events and gauges; it runs detached from the client.
	// Errors are logged.
	Decided(ctx context.Context, q SpendQuery, policy []rate.Limit, dec rate.Decision)
}

// SpendQuery is what the spend step knows of a send.
type SpendQuery struct {
	AppID, Channel string
	// Region is the number's ISO 3166 country (empty for email); Address the number or address.
	Region, Address string
	// Provider is the sender's name, which names the provider when there is one.
	Provider string
	Segments int
	Now      time.Time
}

// Quote is a send's estimated cost and the budgets it counts against.
type Quote struct {
	// Cost is in micro-units of Currency (1,000,000 to the unit).
	Cost     int64
	Currency string
	Limits   []rate.Limit
}

// UseSpend adds the spend step to sends; without it sends cost nothing and no budget
// applies. Call it while wiring, before the service serves.
func (s *Service) UseSpend(sp Spend) { s.spend = sp }

// quote asks the spend step, when there is one.
func (s *Service) quote(app App, t target, segments int, now time.Time) (SpendQuery, Quote) {
	q := SpendQuery{AppID: app.ID, Channel: t.channel, Region: t.region, Address: t.address,
		Provider: s.sender.Name(), Segments: segments, Now: now}
	if s.spend == nil {
		return q, Quote{}
	}
	return q, s.spend.Quote(q)
}

// spendDecided tells the spend step how the decision went, bounded like a store call.
func (s *Service) spendDecided(ctx context.Context, q SpendQuery, policy []rate.Limit, dec rate.Decision) {
	if s.spend == nil || len(dec.Budgets) == 0 {
		return
	}
	ctx, cancel := Bounded(context.WithoutCancel(ctx), max(s.cfg.StoreTimeout, finishTimeout))
	defer cancel()
	s.spend.Decided(ctx, q, policy, dec)
}

// ErrBudgetExceeded means an enforcing budget refused the send: its window has spent what
// it may. Nothing was reserved or sent.
type ErrBudgetExceeded struct {
	// Budget names the budget; Period is its window (day or month).
	Budget, Period string
	// ResetsAt is when the window ends and the budget admits sends again.
	ResetsAt time.Time
	// RetryAfter is how long until then.
	RetryAfter time.Duration
	// Country, when the budget's fence refused the send, is the send's country, Share what
	// it (Young: the young countries together) may spend in the window, in micro-units.
	Country string
	Young   bool
	Share   int64
}

func (e *ErrBudgetExceeded) Error() string {
	if e.Country != "" {
		return "budget " + e.Budget + ": " + e.Country + " has spent its share " + e.ShareText() + " of this " + e.Period +
			"; it resets at " + e.ResetsAt.UTC().Format(time.RFC3339)
	}
	return "budget " + e.Budget + " exceeded for this " + e.Period + "; it resets at " + e.ResetsAt.UTC().Format(time.RFC3339)
}

// ShareText is the share as a decimal amount, such as "1.50"; "" when no fence refused.
func (e *ErrBudgetExceeded) ShareText() string {
	if e.Country == "" {
		return ""
	}
	return rate.MicrosText(e.Share)
}

// Reason is how history names the refusal: "budget <name> <window>", followed by the
// country and its share when the fence refused, such as "budget cap day country UZ share
// 1.00 (young countries)".
func (e *ErrBudgetExceeded) Reason() string {
	r := ScopeBudget + " " + e.Budget + " " + e.Period
	if e.Country != "" {
		r += " country " + e.Country + " share " + e.ShareText()
		if e.Young {
			r += " (young countries)"
		}
	}
	return r
}

// budgetExceeded names an enforcing budget's refusal, when one refused.
func budgetExceeded(policy []rate.Limit, dec rate.Decision, now time.Time) *ErrBudgetExceeded {
	st, ok := dec.BudgetRefusal()
	if !ok {
		return nil
	}
	b, _ := rate.BudgetWindow(policy, st)
	e := &ErrBudgetExceeded{Budget: st.Key, Period: "window"}
	if b != nil {
		e.Budget, e.Period, e.ResetsAt = b.Name, b.Period, b.Resets
		e.RetryAfter = max(b.Resets.Sub(now), time.Second)
	}
	// The cap speaks first: a send the cap refused would be refused by it whatever its share.
	if f := st.Fence; f.Refused && !(st.Over && st.Mode == rate.BudgetEnforce) {
		e.Country, e.Young, e.Share = f.Country, f.Young, f.Share
	}
	return e
}
