package ratelimit

import (
	"context"
	"testing"
	"time"

	"otpgate/internal/rate"
)

// The second generation's signals: the long horizon's unapproved sends, volume against the
// baseline, a network's distinct countries, challenges short of a block and through one.

func TestGuardSignals(t *testing.T) { onBackends(t, testGuardSignals) }

func testGuardSignals(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	clocked := func(t *testing.T) (*Limiter, *clock) {
		l, _ := newLimiter(t)
		c := newClock()
		l.Clock = c.Now
		return l, c
	}
	withSolved := func(g *rate.Guard, level int) *rate.Guard { h := *g; h.Solved = level; return &h }

	t.Run("PacedSendsTripOverTheLongHorizon", func(t *testing.T) {
		l, c := clocked(t)
		g := guarded(testGuard(3, false))
		// One send every 30 minutes: the recent horizon (10 min) never holds three.
		for i := range 2 {
			if d := mustAllow(t, l, g); !d.Allowed {
				t.Fatalf("send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			c.Add(30 * time.Minute)
		}
		d := mustAllow(t, l, g)
		gs := d.Guards[0]
		if d.Allowed || !gs.Tripped || gs.Signal != rate.SignalLong {
			t.Fatalf("third paced send: got allowed %v guard %+v, want a trip by %s", d.Allowed, gs, rate.SignalLong)
		}
		if gs.Counts.LongSends < 1.9 || gs.Counts.RecentSends > 0.1 {
			t.Errorf("counts: got %+v, want about 2 long sends and none recent", gs.Counts)
		}
	})

	t.Run("PacedSendsThatConvertDoNotTrip", func(t *testing.T) {
		l, c := clocked(t)
		g := guarded(testGuard(3, false))
		for i := range 20 {
			d := mustAllow(t, l, g)
			if !d.Allowed {
				t.Fatalf("send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			if i%2 == 0 {
				if err := l.Approve(ctx, []rate.Limit{g}, 1); err != nil {
					t.Fatal(err)
				}
			}
			c.Add(30 * time.Minute)
		}
	})

	t.Run("WeightlessApprovalsDoNotCount", func(t *testing.T) {
		l, _ := clocked(t)
		g := guarded(testGuard(3, false))
		for i := range 2 {
			mustAllow(t, l, g)
			if err := l.Approve(ctx, []rate.Limit{g}, 0); err != nil {
				t.Fatal(err)
			}
			_ = i
		}
		if d := mustAllow(t, l, g); d.Allowed || !d.Guards[0].Tripped {
			t.Fatalf("got allowed %v guard %+v, want a trip: approvals of weight 0 convert nothing", d.Allowed, d.Guards[0])
		}
	})

	t.Run("VolumeAsksForAChallenge", func(t *testing.T) {
		l, _ := clocked(t)
		g := testGuard(100, false)
		g.VolumeFloor, g.VolumeRatio, g.Params.Surge = 5, -1, 10
		lim := guarded(g)
		for i := range 4 {
			if d := mustAllow(t, l, lim); !d.Allowed {
				t.Fatalf("send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			if err := l.Approve(ctx, []rate.Limit{lim}, 1); err != nil {
				t.Fatal(err)
			}
		}
		d := mustAllow(t, l, lim)
		gs := d.Guards[0]
		if d.Allowed || !gs.Demands() || gs.Signal != rate.SignalVolume || gs.Challenge != rate.ChallengeHigh {
			t.Fatalf("fifth send: got allowed %v guard %+v, want a level-2 challenge for volume, whatever the conversion", d.Allowed, gs)
		}
		if level, _, ok := d.Challenge(); !ok || level != rate.ChallengeHigh {
			t.Errorf("Decision.Challenge: got %d %v, want level 2", level, ok)
		}
		if gs.Counts.VolumeExpected != 0 {
			t.Errorf("volume expected: got %v, want 0 for a target with no baseline", gs.Counts.VolumeExpected)
		}
		if d := mustAllow(t, l, guarded(withSolved(g, rate.ChallengeElevated))); d.Allowed {
			t.Errorf("a level-1 solution: got allowed, want refused")
		}
		d = mustAllow(t, l, guarded(withSolved(g, rate.ChallengeHigh)))
		if gs := d.Guards[0]; !d.Allowed || !gs.Passed || !gs.Challenged {
			t.Errorf("a level-2 solution: got allowed %v guard %+v, want admitted through the challenge", d.Allowed, gs)
		}
	})

	t.Run("AnEstablishedTargetsSurgeIsNotVolume", func(t *testing.T) {
		l, c := clocked(t)
		g := testGuard(100, false)
		g.VolumeFloor, g.VolumeRatio, g.Params.Surge = 5, -1, 10
		lim := guarded(g)
		// A day at one send a minute, all approved: a baseline of about 1,440 sends (the
		// volume signal off meanwhile: ten recent sends are twice its floor).
		quiet := *g
		quiet.VolumeFloor = 0
		for i := range 24 * 60 {
			if d := mustAllow(t, l, guarded(&quiet)); !d.Allowed {
				t.Fatalf("baseline send %d: got %+v, want allowed", i+1, d.Guards[0])
			}
			if err := l.Approve(ctx, []rate.Limit{lim}, 1); err != nil {
				t.Fatal(err)
			}
			c.Add(time.Minute)
		}
		// Five times the rate for ten minutes.
		for i := range 50 {
			d := mustAllow(t, l, lim)
			if !d.Allowed || d.Guards[0].Challenged {
				t.Fatalf("surge send %d: got allowed %v guard %+v, want allowed without a challenge", i+1, d.Allowed, d.Guards[0])
			}
			// What the baseline explains is reported: what the surge was weighed against.
			if c := d.Guards[0].Counts; c.VolumeExpected <= 0 || c.RecentSends-c.VolumeExpected+0.01 >= 5 {
				t.Fatalf("surge send %d: got counts %+v, want the volume its baseline explains within the floor of the recent sends", i+1, c)
			}
			if err := l.Approve(ctx, []rate.Limit{lim}, 1); err != nil {
				t.Fatal(err)
			}
			c.Add(12 * time.Second)
		}
	})

	t.Run("ANetworkAskingForManyCountriesNeedsAChallenge", func(t *testing.T) {
		l, _ := clocked(t)
		g := testGuard(100, false)
		g.Params.Countries = 3
		net := func(country string) rate.Limit {
			h := *g
			h.Country = country
			return rate.Limit{Scope: rate.ScopeIPNet, Key: "198.51.100.0/24", Guard: &h}
		}
		for _, cc := range []string{"UZ", "KG", "UZ", "TJ", "KG"} {
			if d := mustAllow(t, l, net(cc)); !d.Allowed {
				t.Fatalf("%s: got %+v, want allowed: three countries", cc, d.Guards[0])
			}
		}
		d := mustAllow(t, l, net("AZ"))
		gs := d.Guards[0]
		if d.Allowed || gs.Signal != rate.SignalCountries || gs.Challenge != rate.ChallengeElevated {
			t.Fatalf("a fourth country: got allowed %v guard %+v, want a level-1 challenge", d.Allowed, gs)
		}
		if gs.Counts.Countries < 2.9 {
			t.Errorf("got %v countries counted, want 3", gs.Counts.Countries)
		}
		if d := mustAllow(t, l, net("UZ")); !d.Allowed {
			t.Errorf("a country asked for before: got %+v, want allowed", d.Guards[0])
		}
	})

	t.Run("ABlockAdmitsAFixedNumberOfSolvedSendsOverItsLife", func(t *testing.T) {
		l, c := clocked(t)
		g := testGuard(3, false)
		g.Params.BlockPasses = 3
		lim := guarded(g)
		mustAllow(t, l, lim)
		mustAllow(t, l, lim)
		d := mustAllow(t, l, lim)
		if gs := d.Guards[0]; d.Allowed || !gs.Tripped || gs.Challenge != rate.ChallengeBlocked {
			t.Fatalf("trip: got allowed %v guard %+v, want a trip offering a level-3 challenge", d.Allowed, gs)
		}
		if d := mustAllow(t, l, guarded(withSolved(g, rate.ChallengeHigh))); d.Allowed {
			t.Fatalf("a level-2 solution: got allowed, want the block to hold")
		}
		// Each solved send asks one level more; a solution of the level before no longer passes.
		for i, level := range []int{3, 4, 5} {
			if level > rate.ChallengeBlocked {
				d := mustAllow(t, l, guarded(withSolved(g, level-1)))
				if gs := d.Guards[0]; d.Allowed || gs.Challenge != level {
					t.Fatalf("pass %d with level %d: got allowed %v guard %+v, want refused asking level %d", i+1, level-1, d.Allowed, gs, level)
				}
			}
			d := mustAllow(t, l, guarded(withSolved(g, level)))
			if gs := d.Guards[0]; !d.Allowed || !gs.Blocked || !gs.Passed {
				t.Fatalf("pass %d at level %d: got allowed %v guard %+v, want blocked and passed", i+1, level, d.Allowed, gs)
			}
		}
		// Three passes are the block's, whatever time passes: the recent horizon's decay
		// gives none back.
		for _, wait := range []time.Duration{0, time.Hour, 6 * time.Hour} {
			c.Add(wait)
			d := mustAllow(t, l, guarded(withSolved(g, rate.ChallengeTop)))
			if gs := d.Guards[0]; d.Allowed || !gs.Refuses() || gs.Challenge != 0 {
				t.Fatalf("after %v more: got allowed %v guard %+v, want a block that offers no challenge any more", wait, d.Allowed, gs)
			}
		}
		// An approval during the block pays one pass back, at the level it had reached.
		if err := l.Approve(ctx, []rate.Limit{lim}, 1); err != nil {
			t.Fatal(err)
		}
		d = mustAllow(t, l, guarded(withSolved(g, rate.ChallengeBlocked)))
		if gs := d.Guards[0]; d.Allowed || gs.Challenge != 5 {
			t.Fatalf("after an approval: got allowed %v guard %+v, want refused asking level 5", d.Allowed, gs)
		}
		if d := mustAllow(t, l, guarded(withSolved(g, 5))); !d.Allowed {
			t.Fatalf("after an approval, level 5: got %+v, want passed", d.Guards[0])
		}
		// A new block starts with none of its passes used (the long horizon's unapproved
		// sends trip it at once).
		c.Add(6 * time.Hour)
		d = mustAllow(t, l, lim)
		if gs := d.Guards[0]; d.Allowed || !gs.Tripped || gs.Challenge != rate.ChallengeBlocked {
			t.Fatalf("second block: got allowed %v guard %+v, want a trip offering level 3", d.Allowed, gs)
		}
	})

	t.Run("AShadowChallengeRefusesNothing", func(t *testing.T) {
		l, _ := clocked(t)
		g := testGuard(100, true)
		g.VolumeFloor, g.VolumeRatio, g.Params.Surge = 2, -1, 10
		lim := guarded(g)
		mustAllow(t, l, lim)
		d := mustAllow(t, l, lim)
		if gs := d.Guards[0]; !d.Allowed || !gs.Challenged || !gs.Shadow {
			t.Fatalf("got allowed %v guard %+v, want allowed with a shadow challenge", d.Allowed, gs)
		}
		if got := d.ShadowReport(); got != "challenge prefix +8190123" {
			t.Errorf("ShadowReport: got %q, want the challenge", got)
		}
	})
}

func TestYoungCountriesPool(t *testing.T) { onBackends(t, testYoungCountriesPool) }

func testYoungCountriesPool(t *testing.T, newLimiter backend) {
	ctx := context.Background()
	l, _ := newLimiter(t)
	c := newClock()
	l.Clock = c.Now
	g := testGuard(100, false)
	g.Params.ShortHorizon, g.Params.LongHorizon = 30*time.Second, 10*time.Minute
	policy := func(country, prefix string) []rate.Limit {
		cg, pg, pool := *g, *g, *g
		cg.Role, pg.Floor, pool.Role, pool.Floor = rate.RoleCountry, 10, rate.RolePool, 3
		return []rate.Limit{
			{Scope: rate.ScopeCountry, Key: country, Guard: &cg},
			{Scope: rate.ScopePrefix, Key: prefix, Guard: &pg},
			{Scope: rate.ScopeYoungCountries, Key: rate.KeyPool, Guard: &pool},
		}
	}
	allow := func(country, prefix string) rate.Decision {
		d, err := l.Allow(ctx, policy(country, prefix))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Sends seconds apart: the pool leaves out those still in flight, which a person may
	// yet approve.
	for i, cc := range []string{"UZ", "KG"} {
		if d := allow(cc, "+99890"+cc); !d.Allowed {
			t.Fatalf("send %d: got %+v, want allowed", i+1, d.Guards)
		}
		c.Add(10 * time.Second)
	}
	if d := allow("TJ", "+99291"); !d.Allowed {
		t.Fatalf("third young country: got %+v, want allowed: the pool holds a hair under three", d.Guards[2])
	}
	c.Add(10 * time.Second)
	d := allow("AM", "+37477")
	if gs := d.Guards[2]; d.Allowed || !gs.Tripped || gs.Signal != rate.SignalYoungCountries || gs.Challenge != rate.ChallengeElevated {
		t.Fatalf("fourth young country: got allowed %v pool %+v, want the pool tripped, asking a level-1 challenge", d.Allowed, gs)
	}
	if len(d.Trips()) != 1 || d.Trips()[0].Blocked {
		t.Errorf("Trips: got %+v, want the pool's trip, which blocks nothing", d.Trips())
	}
	for range 12 {
		c.Add(15 * time.Second)
		if d := allow("AZ", "+99440"); d.Allowed {
			t.Fatalf("three minutes on: got allowed, want the pool to hold: %+v", d.Guards[2])
		}
	}
	// Its users solve the challenge while the country is young; once it has an approved
	// history, its sends no longer touch the pool.
	jp := policy("JP", "+8190")
	for _, lim := range jp {
		lim.Guard.Solved = rate.ChallengeElevated
	}
	for i := range 25 {
		if d, err := l.Allow(ctx, jp); err != nil || !d.Allowed {
			t.Fatalf("solved send %d: got %+v %v, want admitted", i+1, d.Guards, err)
		}
		if err := l.Approve(ctx, jp, 1); err != nil {
			t.Fatal(err)
		}
	}
	if d := allow("JP", "+8190"); !d.Allowed {
		t.Errorf("an established country: got %+v, want allowed", d.Guards)
	}
}
