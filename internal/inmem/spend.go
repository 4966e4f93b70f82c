package inmem

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

var _ spend.Store = (*Store)(nil)

// RecordBudgetThreshold implements spend.Store.
func (s *Store) RecordBudgetThreshold(ctx context.Context, key string, d events.BudgetThresholdData, at time.Time) error {
	if err := alive("record budget threshold", ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(d.AppID, events.BudgetThreshold, key, "", d, at)
	return nil
}

// spent reports whether a send cost something: priced, and not failed.
func spent(r *history.SendRow) bool { return r.Cost > 0 && r.SendStatus != otp.SendFailed }

// SpendByDay implements spend.Store.
func (s *Store) SpendByDay(ctx context.Context, from, to time.Time) ([]spend.DayTotal, error) {
	if err := alive("spend by day", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sums := map[spend.DayTotal]spend.DayTotal{}
	for _, r := range s.sends {
		if !spent(r) || r.Time.Before(from) || !r.Time.Before(to) {
			continue
		}
		t := r.Time.UTC()
		k := spend.DayTotal{Day: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), AppID: otp.StoredAppID(r.AppID), Country: r.Country}
		v := sums[k]
		v.Day, v.AppID, v.Country = k.Day, k.AppID, k.Country
		v.Cost += r.Cost
		v.Sends++
		sums[k] = v
	}
	out := slices.Collect(maps.Values(sums))
	slices.SortFunc(out, func(a, b spend.DayTotal) int {
		return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.AppID, b.AppID), cmp.Compare(a.Country, b.Country))
	})
	return out, nil
}

// TopPrefixes implements spend.Store.
func (s *Store) TopPrefixes(ctx context.Context, from time.Time, drop, limit int) ([]spend.PrefixTotal, error) {
	if err := alive("top prefixes", ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sums := map[[2]string]spend.PrefixTotal{}
	for _, r := range s.sends {
		if !spent(r) || r.Time.Before(from) || r.Channel == otp.ChannelEmail {
			continue
		}
		k := [2]string{r.Phone[:max(len(r.Phone)-drop, 2)], r.Country}
		v := sums[k]
		v.Prefix, v.Country = k[0], k[1]
		v.Cost += r.Cost
		v.Sends++
		sums[k] = v
	}
	out := slices.Collect(maps.Values(sums))
	slices.SortFunc(out, func(a, b spend.PrefixTotal) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Prefix, b.Prefix))
	})
	return out[:min(len(out), max(limit, 0))], nil
}

// SpentSince implements spend.Store.
func (s *Store) SpentSince(ctx context.Context, from time.Time, app, country string) (spend.Micros, error) {
	if err := alive("spent since", ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum spend.Micros
	for _, r := range s.sends {
		if spent(r) && !r.Time.Before(from) && (app == "" || otp.StoredAppID(r.AppID) == otp.StoredAppID(app)) && (country == "" || r.Country == country) {
			sum += r.Cost
		}
	}
	return sum, nil
}
