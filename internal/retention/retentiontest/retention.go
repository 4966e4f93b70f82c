package retentiontest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/fixture"
)

func testRetention(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("RowsPastRetentionGoAndNewerOnesStay", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		s := fixture.SeedLifecycle(e)
		r := e.Pass(e.Job(retention.Options{}))
		if !r.Horizon.Equal(fixture.Horizon()) || r.Rolled == 0 {
			t.Errorf("report: got horizon %v, %d hours rolled up; want %v and some", r.Horizon, r.Rolled, fixture.Horizon())
		}
		for _, id := range s.OldSends {
			_, err := e.Store.Send(e.Ctx, id)
			fixture.WantNotFound(t, "old send "+id, err)
		}
		for _, id := range s.OldVerifications {
			_, err := e.Store.Verification(e.Ctx, id)
			fixture.WantNotFound(t, "old verification "+id, err)
		}
		for _, id := range s.NewSends {
			e.SendRow(id)
		}
		for _, id := range s.NewVerifications {
			e.Verification(id)
		}
		d, err := e.Store.VerificationDetail(e.Ctx, s.Straddling)
		if err != nil || len(d.Sends) != 0 || len(d.Attempts) != 1 || d.Attempts[0].Outcome != otp.OutcomeApproved {
			t.Errorf("straddling verification: got %+v, %v; want it kept with its approval and without its old send", d, err)
		}
		if r.Purged["sends"] != len(s.OldSends) || r.Purged["verifications"] != len(s.OldVerifications) || r.Purged["attempts"] == 0 {
			t.Errorf("purged: got %v, want %d sends, %d verifications and some attempts", r.Purged, len(s.OldSends), len(s.OldVerifications))
		}
	})

	t.Run("ChartsAndConversionAreTheSameAfterThePurge", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		fixture.SeedLifecycle(e)
		charts, conv := chartsOf(e), conversion(e)
		j := e.Job(retention.Options{})
		e.Pass(j)
		for q, got := range chartsOf(e) {
			t.Run(q.String(), func(t *testing.T) { fixture.WantBuckets(t, got, charts[q]) })
		}
		wantConversion(t, conversion(e), conv)

		again := e.Pass(j) // nothing left to do, and nothing changes
		if again.Rolled != 0 || slices.ContainsFunc(j.Targets(), func(n string) bool { return again.Purged[n] != 0 }) {
			t.Errorf("second pass: got %+v, want nothing rolled up or purged", again)
		}
		for q, got := range chartsOf(e) {
			fixture.WantBuckets(t, got, charts[q])
		}
		wantConversion(t, conversion(e), conv)
		for _, target := range j.Targets() {
			want := time.Duration(0)
			if target == "verifications" {
				want = fixture.Straddle // kept for its approval after the horizon
			}
			if b := j.Behind(target); b != want {
				t.Errorf("%s: got %v behind, want %v", target, b, want)
			}
		}
	})

}

// testRetentionRollups holds the cases of testRetention about rollups and the lock.
func testRetentionRollups(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("NothingIsPurgedBeforeItIsRolledUp", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		s := fixture.SeedLifecycle(e)
		for _, target := range []string{"attempts", "sends", "verifications"} {
			if n, err := e.Lifecycle().Purge(e.Ctx, target, fixture.Base(), 1000); err != nil || n != 0 {
				t.Errorf("Purge(%s) before any roll-up: got %d, %v; want 0", target, n, err)
			}
		}
		// Rolled up to a day before the horizon, the purge stops there, whatever it is asked.
		at, _, err := e.Lifecycle().RollUp(e.Ctx, fixture.Base().Add(-400*24*time.Hour), fixture.Horizon().Add(-24*time.Hour), 4)
		if err != nil || !at.Equal(fixture.Horizon().Add(-24*time.Hour)) {
			t.Fatalf("RollUp: got %v, %v; want the boundary at %v", at, err, fixture.Horizon().Add(-24*time.Hour))
		}
		if _, err := e.Lifecycle().Purge(e.Ctx, "sends", fixture.Base(), 1000); err != nil {
			t.Fatalf("Purge: %v", err)
		}
		for id, sent := range s.SendTimes {
			_, err := e.Store.Send(e.Ctx, id)
			if sent.Before(at) {
				fixture.WantNotFound(t, fmt.Sprintf("send of %v", sent), err)
			} else if err != nil {
				t.Errorf("send of %v: %v, want it kept", sent, err)
			}
		}
		if oldest, err := e.Lifecycle().Oldest(e.Ctx, "sends"); err != nil || oldest.Before(at) {
			t.Errorf("oldest send: got %v, %v; want none before %v", oldest, err, at)
		}
	})

	t.Run("RollupsPastTheirRetentionGo", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		fixture.SeedLifecycle(e)
		e.Pass(e.Job(retention.Options{}))
		j := e.Job(retention.Options{Rollups: 60 * time.Hour})
		e.Pass(j)
		for _, target := range []string{"stats_hourly", "conversion_hourly"} {
			oldest, err := e.Lifecycle().Oldest(e.Ctx, target)
			if err != nil || oldest.Before(fixture.Base().Add(-60*time.Hour)) || oldest.After(fixture.Horizon()) {
				t.Errorf("%s: got the oldest at %v, %v; want it between %v and %v", target, oldest, err, fixture.Base().Add(-60*time.Hour), fixture.Horizon())
			}
		}
		if j.Purged("stats_hourly") == 0 || j.Purged("conversion_hourly") == 0 {
			t.Errorf("got %d and %d rollups purged, want some of each", j.Purged("stats_hourly"), j.Purged("conversion_hourly"))
		}
	})

	t.Run("OnePassAtATime", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		release, ok, err := e.Lifecycle().TryLifecycleLock(e.Ctx)
		if err != nil || !ok {
			t.Fatalf("first lock: got %v, %v; want it taken", ok, err)
		}
		if _, again, err := e.Lifecycle().TryLifecycleLock(e.Ctx); err != nil || again {
			t.Errorf("second lock while the first is held: got %v, %v; want it refused", again, err)
		}
		if r, err := e.Job(retention.Options{}).Pass(e.Ctx); err != nil || !r.Skipped {
			t.Errorf("pass while the lock is held: got %+v, %v; want it skipped", r, err)
		}
		release()
		release, ok, err = e.Lifecycle().TryLifecycleLock(e.Ctx)
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
