package otp_test

import (
	"testing"

	"otpgate/internal/otp"
)

func TestExplain(t *testing.T) {
	params := otp.GuardParams{Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20, Countries: 3}
	prefix := otp.Limit{Scope: otp.ScopePrefix, Key: "+8190123", Guard: &otp.Guard{Floor: 10, VolumeFloor: 30, VolumeRatio: -1, Params: params}}
	network := otp.Limit{Scope: otp.ScopeIPNet, Key: "192.0.2.0/24", Guard: &otp.Guard{Floor: 20, Country: "JP", Params: params}}
	policy := []otp.Limit{{Scope: otp.ScopePhone, Key: "+819012345678"}, prefix, network}

	t.Run("ATripNamesTheFiguresItWasDecidedOn", func(t *testing.T) {
		dec := otp.Decision{Guards: []otp.GuardState{
			{Scope: otp.ScopePrefix, Key: "+8190123", Blocked: true, Tripped: true, Signal: otp.SignalRecent,
				Counts: otp.GuardCounts{RecentSends: 11, LongSends: 11}},
			{Scope: otp.ScopeIPNet, Key: "192.0.2.0/24"},
		}}
		got := dec.Explain(policy)
		if got == nil {
			t.Fatal("got nil, want the trip explained")
		}
		f := got.Figures
		if got.Action != otp.FraudTripped || got.Signal != otp.SignalRecent || got.Scope != otp.ScopePrefix || got.Key != "+8190123" ||
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
		dec := otp.Decision{Allowed: true, Guards: []otp.GuardState{
			{Scope: otp.ScopePrefix, Key: "+8190123", Blocked: true, Passed: true, Challenge: 3,
				Counts: otp.GuardCounts{RecentSends: 13, RecentApprovals: 1, LongSends: 40, LongApprovals: 20}},
		}}
		got := dec.Explain(policy)
		if got == nil || got.Action != otp.FraudPassed || got.Signal != otp.SignalBlock || got.Level != 3 ||
			got.Figures.RecentSends != 13 || got.Figures.RecentUnapproved != 12 || got.Figures.LongSends != 40 {
			t.Fatalf("got %+v, want a passed block counted as the limiter reported it", got)
		}
		// Baseline: (20-1 + 12) / (27 + 20); threshold 0.3 × that.
		if f := got.Figures; f.BaselineConversion != 0.66 || f.Threshold != 0.198 {
			t.Errorf("got baseline %v, threshold %v; want 0.66, 0.198", f.BaselineConversion, f.Threshold)
		}
	})

	t.Run("ANetworksCountriesCompareTheLongConversion", func(t *testing.T) {
		dec := otp.Decision{Guards: []otp.GuardState{
			{Scope: otp.ScopePrefix, Key: "+8190123"},
			{Scope: otp.ScopeIPNet, Key: "192.0.2.0/24", Challenged: true, Challenge: 1, Signal: otp.SignalCountries,
				Counts: otp.GuardCounts{RecentSends: 3, LongSends: 9, Countries: 4}},
		}}
		got := dec.Explain(policy)
		if got == nil || got.Action != otp.FraudChallenged || got.Level != 1 || got.Figures.Countries != 4 ||
			got.Figures.CountriesAllowed != 3 || got.Figures.LongBaseline != 0.414 || got.Figures.Threshold != 0.124 {
			t.Fatalf("got %+v, want a countries challenge against 0.3 × the long baseline", got)
		}
		want := "4 distinct countries from one network (allowed 3), conversion 0 % against a baseline of 41 % × 0.3"
		if s := got.Summary(); s != want {
			t.Errorf("Summary: got %q, want %q", s, want)
		}
	})

	t.Run("VolumeNamesWhatTheBaselineExplains", func(t *testing.T) {
		dec := otp.Decision{Guards: []otp.GuardState{
			{Scope: otp.ScopePrefix, Key: "+8190123", Challenged: true, Challenge: 2, Signal: otp.SignalVolume,
				Counts: otp.GuardCounts{RecentSends: 44, RecentApprovals: 30, LongSends: 60, LongApprovals: 45, VolumeExpected: 8.5}},
		}}
		got := dec.Explain(policy)
		want := "45 recent sends where the baseline explains 8.5 (volume floor 30)"
		if got == nil || got.Summary() != want || got.Figures.Threshold != 0 {
			t.Errorf("got %+v (%q), want %q with no conversion threshold", got, got.Summary(), want)
		}
	})

	t.Run("ShadowFindingsComeLast", func(t *testing.T) {
		dec := otp.Decision{Allowed: true, Guards: []otp.GuardState{
			{Scope: otp.ScopePrefix, Key: "+8190123", Shadow: true, Blocked: true, Counts: otp.GuardCounts{RecentSends: 1, LongSends: 1}},
		}}
		if got := dec.Explain(policy); got == nil || got.Action != otp.FraudShadow {
			t.Errorf("got %+v, want the shadow block explained", got)
		}
		if got := (otp.Decision{Allowed: true, Guards: []otp.GuardState{{Scope: otp.ScopePrefix, Key: "+8190123"}}}).Explain(policy); got != nil {
			t.Errorf("a clear guard: got %+v, want nil", got)
		}
	})
}
