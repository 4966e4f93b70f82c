package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
)

func testRetention(t *testing.T, newStore func(t *testing.T) Stores) {
	t.Run("RowsPastRetentionGoAndNewerOnesStay", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Retention)
		s := seedLifecycle(e)
		r := e.pass(e.job(retention.Options{}))
		if !r.Horizon.Equal(horizon()) || r.Rolled == 0 {
			t.Errorf("report: got horizon %v, %d hours rolled up; want %v and some", r.Horizon, r.Rolled, horizon())
		}
		for _, id := range s.oldSends {
			_, err := e.History.Send(e.ctx, id)
			wantNotFound(t, "old send "+id, err)
		}
		for _, id := range s.oldVerifications {
			_, err := e.Store.Verification(e.ctx, id)
			wantNotFound(t, "old verification "+id, err)
		}
		for _, id := range s.newSends {
			e.sendRow(id)
		}
		for _, id := range s.newVerifications {
			e.verification(id)
		}
		d, err := e.History.VerificationDetail(e.ctx, s.straddling)
		if err != nil || len(d.Sends) != 0 || len(d.Attempts) != 1 || d.Attempts[0].Outcome != otp.OutcomeApproved {
			t.Errorf("straddling verification: got %+v, %v; want it kept with its approval and without its old send", d, err)
		}
		if r.Purged["sends"] != len(s.oldSends) || r.Purged["verifications"] != len(s.oldVerifications) || r.Purged["attempts"] == 0 {
			t.Errorf("purged: got %v, want %d sends, %d verifications and some attempts", r.Purged, len(s.oldSends), len(s.oldVerifications))
		}
	})

	t.Run("ChartsAndConversionAreTheSameAfterThePurge", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Retention)
		seedLifecycle(e)
		charts, conv := e.charts(), e.conversion()
		j := e.job(retention.Options{})
		e.pass(j)
		for q, got := range e.charts() {
			t.Run(q.String(), func(t *testing.T) { WantBuckets(t, got, charts[q]) })
		}
		wantConversion(t, e.conversion(), conv)

		again := e.pass(j) // nothing left to do, and nothing changes
		if again.Rolled != 0 || slices.ContainsFunc(j.Targets(), func(n string) bool { return again.Purged[n] != 0 }) {
			t.Errorf("second pass: got %+v, want nothing rolled up or purged", again)
		}
		for q, got := range e.charts() {
			WantBuckets(t, got, charts[q])
		}
		wantConversion(t, e.conversion(), conv)
		for _, target := range j.Targets() {
			want := time.Duration(0)
			if target == "verifications" {
				want = straddle // kept for its approval after the horizon
			}
			if b := j.Behind(target); b != want {
				t.Errorf("%s: got %v behind, want %v", target, b, want)
			}
		}
	})

	t.Run("NothingIsPurgedBeforeItIsRolledUp", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Retention)
		s := seedLifecycle(e)
		for _, target := range []string{"attempts", "sends", "verifications"} {
			if n, err := e.lifecycle().Purge(e.ctx, target, base(), 1000); err != nil || n != 0 {
				t.Errorf("Purge(%s) before any roll-up: got %d, %v; want 0", target, n, err)
			}
		}
		// Rolled up to a day before the horizon, the purge stops there, whatever it is asked.
		at, _, err := e.lifecycle().RollUp(e.ctx, base().Add(-400*24*time.Hour), horizon().Add(-24*time.Hour), 4)
		if err != nil || !at.Equal(horizon().Add(-24*time.Hour)) {
			t.Fatalf("RollUp: got %v, %v; want the boundary at %v", at, err, horizon().Add(-24*time.Hour))
		}
		if _, err := e.lifecycle().Purge(e.ctx, "sends", base(), 1000); err != nil {
			t.Fatalf("Purge: %v", err)
		}
		for id, sent := range s.sendTimes {
			_, err := e.History.Send(e.ctx, id)
			if sent.Before(at) {
				wantNotFound(t, fmt.Sprintf("send of %v", sent), err)
			} else if err != nil {
				t.Errorf("send of %v: %v, want it kept", sent, err)
			}
		}
		if oldest, err := e.lifecycle().Oldest(e.ctx, "sends"); err != nil || oldest.Before(at) {
			t.Errorf("oldest send: got %v, %v; want none before %v", oldest, err, at)
		}
	})

	t.Run("RollupsPastTheirRetentionGo", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Retention)
		seedLifecycle(e)
		e.pass(e.job(retention.Options{}))
		j := e.job(retention.Options{Rollups: 60 * time.Hour})
		e.pass(j)
		for _, target := range []string{"stats_hourly", "conversion_hourly"} {
			oldest, err := e.lifecycle().Oldest(e.ctx, target)
			if err != nil || oldest.Before(base().Add(-60*time.Hour)) || oldest.After(horizon()) {
				t.Errorf("%s: got the oldest at %v, %v; want it between %v and %v", target, oldest, err, base().Add(-60*time.Hour), horizon())
			}
		}
		if j.Purged("stats_hourly") == 0 || j.Purged("conversion_hourly") == 0 {
			t.Errorf("got %d and %d rollups purged, want some of each", j.Purged("stats_hourly"), j.Purged("conversion_hourly"))
		}
	})

	t.Run("OnePassAtATime", func(t *testing.T) {
		e := newEnv(t, newStore)
		e.need(Retention)
		release, ok, err := e.lifecycle().TryLifecycleLock(e.ctx)
		if err != nil || !ok {
			t.Fatalf("first lock: got %v, %v; want it taken", ok, err)
		}
		if _, again, err := e.lifecycle().TryLifecycleLock(e.ctx); err != nil || again {
			t.Errorf("second lock while the first is held: got %v, %v; want it refused", again, err)
		}
		if r, err := e.job(retention.Options{}).Pass(e.ctx); err != nil || !r.Skipped {
			t.Errorf("pass while the lock is held: got %+v, %v; want it skipped", r, err)
		}
		release()
		release, ok, err = e.lifecycle().TryLifecycleLock(e.ctx)
		if err != nil || !ok {
			t.Fatalf("lock after release: got %v, %v; want it taken", ok, err)
		}
		release()
	})
}

// wantConversion fails t unless got are want, query by query.
func wantConversion(t *testing.T, got, want [][]fraud.PrefixCount) {
	t.Helper()
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("conversion since %s drop %d: got %+v, want %+v", conversionQueries[i].since, conversionQueries[i].drop, got[i], want[i])
		}
	}
}
