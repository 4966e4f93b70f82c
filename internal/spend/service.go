package spend

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Service is the spend step of sends (otp.Spend) over the running snapshot: it prices a
// send, names the budget windows it reserves its cost in, and reports the thresholds a
// decision crossed as budget.threshold events.
type Service struct {
	snapshots *Reloader
	store     Store
	log       *slog.Logger
}

var _ otp.Spend = (*Service)(nil)

// NewService returns the spend step.
func NewService(snapshots *Reloader, store Store, log *slog.Logger) *Service {
	return &Service{snapshots: snapshots, store: store, log: log}
}

// Quote implements otp.Spend. A send nothing prices costs nothing and reserves nothing.
func (s *Service) Quote(q otp.SpendQuery) otp.Quote {
	snap := s.snapshots.Snapshot()
	cost := snap.prices.Cost(q.Channel, q.Region, q.Address, q.Provider, q.Segments)
	out := otp.Quote{Cost: cost, Currency: snap.prices.Currency()}
	if cost > 0 {
		out.Limits = Limits(snap.Windows(q.AppID, q.Region, q.Now), q.Region, cost, q.Now)
	}
	return out
}

// Decided implements otp.Spend: every threshold a budget crossed becomes one event, and an
// enforcing budget's exhaustion a warning in the log.
func (s *Service) Decided(ctx context.Context, q otp.SpendQuery, policy []rate.Limit, dec rate.Decision) {
	snap := s.snapshots.Snapshot()
	for _, st := range dec.Budgets {
		if len(st.Crossed) == 0 && !st.Fence.Reached {
			continue
		}
		w, ok := rate.BudgetWindow(policy, st)
		if !ok {
			continue
		}
		conf := snap.budget(w.Name)
		d := events.BudgetThresholdData{
			Budget: w.Name, Kind: conf.Kind(), AppID: conf.App, Country: conf.Country, Period: w.Period, Mode: st.Mode,
			Spent: FormatAmount(st.Spent), Cap: FormatAmount(st.Cap), Currency: snap.prices.Currency(),
			WindowStart: events.Time(windowStart(w.Period, w.Resets, conf.TimeZone)), ResetsAt: events.Time(w.Resets),
		}
		if d.AppID != "" {
			d.AppID = otp.StoredAppID(d.AppID)
		}
		if f := st.Fence; f.Reached {
			fd := d
			fd.Threshold, fd.Spent = 100, FormatAmount(st.Spent)
			fd.Fence = &events.BudgetFenceData{Country: f.Country, Young: f.Young, Share: FormatAmount(f.Share), Spent: FormatAmount(f.Spent)}
			if err := s.store.RecordBudgetThreshold(ctx, st.Key+":fence:"+f.Country, fd, q.Now); err != nil {
				s.log.Error("recording a budget's fence failed", "budget", w.Name, "country", f.Country, "err", err)
			}
			s.log.Warn("a country reached its share of a spend budget", "budget", w.Name, "period", w.Period,
				"country", f.Country, "young", f.Young, "share", fd.Fence.Share)
		}
		for _, pct := range st.Crossed {
			d.Threshold = pct
			if err := s.store.RecordBudgetThreshold(ctx, st.Key+":"+strconv.Itoa(pct), d, q.Now); err != nil {
				s.log.Error("recording a budget threshold failed", "budget", w.Name, "threshold", pct, "err", err)
			}
			if pct == 100 {
				s.log.Warn("spend budget reached its cap", "budget", w.Name, "period", w.Period, "mode", st.Mode,
					"resets_at", w.Resets)
			}
		}
	}
}

// budget returns the configured budget of that name; the zero Budget when it is gone.
func (s *Snapshot) budget(name string) Budget {
	for _, b := range s.budgets {
		if b.Name == name {
			return b.Budget
		}
	}
	return Budget{Name: name}
}

// windowStart is when the window that ends at end began.
func windowStart(period string, end time.Time, zone string) time.Time {
	loc, err := location(zone)
	if err != nil {
		loc = time.UTC
	}
	e := end.In(loc)
	if period == PeriodMonth {
		return e.AddDate(0, -1, 0).UTC()
	}
	return e.AddDate(0, 0, -1).UTC()
}
