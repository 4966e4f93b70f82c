package rate_test

import (
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

func TestExplain(t *testing.T) {
	params := rate.GuardParams{Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20, Countries: 3}
	prefix := rate.Limit{Scope: rate.ScopePrefix, Key: "+8190123", Guard: &rate.Guard{Floor: 10, VolumeFloor: 30, VolumeRatio: -1, Params: params}}
	network := rate.Limit{Scope: rate.ScopeIPNet, Key: "192.0.2.0/24", Guard: &rate.Guard{Floor: 20, Country: "JP", Params: params}}
	policy := []rate.Limit{{Scope: otp.ScopePhone, Key: "+819012345678"}, prefix, network}

	t.Run("ATripNamesTheFiguresItWasDecidedOn", func(t *testing.T) {
		dec := rate.Decision{Guards: []rate.GuardState{
			{Scope: rate.ScopePrefix, Key: "+8190123", Blocked: true, Tripped: true, Signal: rate.SignalRecent,
				Counts: rate.GuardCounts{RecentSends: 11, LongSends: 11}},
			{Scope: rate.ScopeIPNet, Key: "192.0.2.0/24"},
		}}
		got := dec.Explain(policy)
		if got == nil {
			t.Fatal("got nil, want the trip explained")
		}
		f := got.Figures
		if got.Action != rate.FraudTripped || got.Signal != rate.SignalRecent || got.Scope != rate.ScopePrefix || got.Key != "+8190123" ||
			f.RecentSends != 12 || f.RecentUnapproved != 12 || f.RecentConversion != 0 || f.BaselineConversion != 0.6 ||
			f.Threshold != 0.18 || f.Floor != 10 || f.Countries != 0 {
			t.Errorf("got %+v, want a recent trip at 12 unapproved sends (this one included) against 0.3 × 0.6", got)
		}
		want := "12 unapproved sends in the recent horizon (floor 10), conversion 0 % against a baseline of 60 % × 0.3"
		if s := got.Summary(); s != want {
			t.Errorf("Summary: got %q, want %q", s, want)
		}
	})

	t.Run("AnAdmittedSendIsCountedOnce", func(t *testing.T) {
		dec := rate.Decision{Allowed: true, Guards: []rate.GuardState{
			{Scope: rate.ScopePrefix, Key: "+8190123", Blocked: true, Passed: true, Challenge: 3,
				Counts: rate.GuardCounts{RecentSends: 13, RecentApprovals: 1, LongSends: 40, LongApprovals: 20}},
		}}
		got := dec.Explain(policy)
		if got == nil || got.Action != rate.FraudPassed || got.Signal != rate.SignalBlock || got.Level != 3 ||
			got.Figures.RecentSends != 13 || got.Figures.RecentUnapproved != 12 || got.Figures.LongSends != 40 {
			t.Fatalf("got %+v, want a passed block counted as the limiter reported it", got)
		}
		// Baseline: (20-1 + 12) / (27 + 20); threshold 0.3 × that.
		if f := got.Figures; f.BaselineConversion != 0.66 || f.Threshold != 0.198 {
			t.Errorf("got baseline %v, threshold %v; want 0.66, 0.198", f.BaselineConversion, f.Threshold)
		}
	})

	t.Run("ANetworksCountriesCompareTheLongConversion", func(t *testing.T) {
		dec := rate.Decision{Guards: []rate.GuardState{
			{Scope: rate.ScopePrefix, Key: "+8190123"},
			{Scope: rate.ScopeIPNet, Key: "192.0.2.0/24", Challenged: true, Challenge: 1, Signal: rate.SignalCountries,
				Counts: rate.GuardCounts{RecentSends: 3, LongSends: 9, Countries: 4}},
		}}
		got := dec.Explain(policy)
		if got == nil || got.Action != rate.FraudChallenged || got.Level != 1 || got.Figures.Countries != 4 ||
			got.Figures.CountriesAllowed != 3 || got.Figures.LongBaseline != 0.414 || got.Figures.Threshold != 0.124 {
			t.Fatalf("got %+v, want a countries challenge against 0.3 × the long baseline", got)
		}
		want := "4 distinct countries from one network (allowed 3), conversion 0 % against a baseline of 41 % × 0.3"
		if s := got.Summary(); s != want {
			t.Errorf("Summary: got %q, want %q", s, want)
		}
	})

	t.Run("VolumeNamesWhatTheBaselineExplains", func(t *testing.T) {
		dec := rate.Decision{Guards: []rate.GuardState{
			{Scope: rate.ScopePrefix, Key: "+8190123", Challenged: true, Challenge: 2, Signal: rate.SignalVolume,
				Counts: rate.GuardCounts{RecentSends: 44, RecentApprovals: 30, LongSends: 60, LongApprovals: 45, VolumeExpected: 8.5}},
		}}
		got := dec.Explain(policy)
		want := "45 recent sends where the baseline explains 8.5 (volume floor 30)"
		if got == nil || got.Summary() != want || got.Figures.Threshold != 0 {
			t.Errorf("got %+v (%q), want %q with no conversion threshold", got, got.Summary(), want)
		}
	})

	t.Run("ShadowFindingsComeLast", func(t *testing.T) {
		dec := rate.Decision{Allowed: true, Guards: []rate.GuardState{
			{Scope: rate.ScopePrefix, Key: "+8190123", Shadow: true, Blocked: true, Counts: rate.GuardCounts{RecentSends: 1, LongSends: 1}},
		}}
		if got := dec.Explain(policy); got == nil || got.Action != rate.FraudShadow {
			t.Errorf("got %+v, want the shadow block explained", got)
		}
		if got := (rate.Decision{Allowed: true, Guards: []rate.GuardState{{Scope: rate.ScopePrefix, Key: "+8190123"}}}).Explain(policy); got != nil {
			t.Errorf("a clear guard: got %+v, want nil", got)
		}
	})
}
