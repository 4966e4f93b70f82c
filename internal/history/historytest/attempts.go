package historytest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/retention"
	"otpgate/internal/storetest/fixture"
)

// attemptSeed is what seedAttempts wrote: each send of a verification by name, in the
// order they were made (oldest first), and the verifications.
type attemptSeed struct {
	sends         map[string]string // name → send id
	verifications map[string]string // name → verification id
	times         map[string]time.Time
}

// seedAttempts writes sends of five verifications in two apps, over every channel kind
// and two countries, some approved, and a refused send, which is no attempt.
func seedAttempts(e *fixture.Env) attemptSeed {
	e.T.Helper()
	s := attemptSeed{sends: map[string]string{}, verifications: map[string]string{}, times: map[string]time.Time{}}
	at := fixture.Base().Add(-2 * time.Hour)
	send := func(name, verification, app, address, channel, country string) otp.BeginSend {
		at = at.Add(time.Minute)
		p := fixture.Params(address, "111111", at)
		p.AppID, p.Channel, p.Country = app, channel, country
		v := e.Send(p).Verification
		e.FinishAs(p, otp.SendSent)
		s.sends[name], s.verifications[verification], s.times[name] = p.SendID, v.ID, at
		return p
	}
	approve := func(verification string) { e.CheckApp(otp.DefaultAppID, s.verifications[verification], "111111", at) }
	send("v1a", "v1", otp.DefaultAppID, "+819011110001", otp.ChannelSMS, "JP")
	send("v2", "v2", fixture.AppB, "+819022220002", otp.ChannelVoice, "JP")
	send("v1b", "v1", otp.DefaultAppID, "+819011110001", otp.ChannelSMS, "JP") // a resend
	approve("v1")
	p := send("v3", "v3", otp.DefaultAppID, "+14155550103", otp.ChannelSMS, "US")
	e.FinishAs(p, otp.SendFailed)
	send("v4", "v4", otp.DefaultAppID, "ana@example.com", otp.ChannelEmail, "")
	approve("v4")
	send("v5", "v5", otp.DefaultAppID, "+819011110005", otp.ChannelSMS, "JP")
	approve("v5")
	e.Denied.RecordDenied(otp.DeniedSend{ID: fixture.NewID(), Phone: "+819011110001", ClientIP: "192.0.2.1", Status: otp.SendBlocked,
		Reason: "phone 1/1m", Channel: otp.ChannelSMS, Time: at.Add(time.Minute)})
	e.MustFlush()
	return s
}

func testAttempts(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("EverySendOfAVerificationNewestFirstByEveryFilter", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedAttempts(e)
		yes, no := true, false
		for _, tc := range []struct {
			name string
			f    history.AttemptFilter
			want []string // newest first
		}{
			{"All", history.AttemptFilter{}, []string{"v5", "v4", "v3", "v1b", "v2", "v1a"}},
			{"App", history.AttemptFilter{AppID: fixture.AppB}, []string{"v2"}},
			{"Verification", history.AttemptFilter{VerificationID: s.verifications["v1"]}, []string{"v1b", "v1a"}},
			{"Address", history.AttemptFilter{Address: "+819011110001"}, []string{"v1b", "v1a"}},
			{"Country", history.AttemptFilter{Country: "US"}, []string{"v3"}},
			{"Channel", history.AttemptFilter{Channel: otp.ChannelEmail}, []string{"v4"}},
			{"Prefix", history.AttemptFilter{Prefix: "+81901"}, []string{"v5", "v1b", "v1a"}},
			{"Converted", history.AttemptFilter{Converted: &yes}, []string{"v5", "v4", "v1b", "v1a"}},
			{"Unconverted", history.AttemptFilter{Converted: &no}, []string{"v3", "v2"}},
			{"Window", history.AttemptFilter{From: s.times["v2"], To: s.times["v4"]}, []string{"v3", "v1b", "v2"}},
			{"Several", history.AttemptFilter{AppID: otp.DefaultAppID, Country: "JP", Converted: &yes}, []string{"v5", "v1b", "v1a"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rows, next, err := e.Store.VerificationAttempts(e.Ctx, tc.f)
				var got []string
				for _, r := range rows {
					got = append(got, nameOf(s.sends, r.ID))
				}
				if err != nil || next != nil || !slices.Equal(got, tc.want) {
					t.Errorf("got %v (next %v), %v; want %v", got, next, err, tc.want)
				}
				for _, r := range rows {
					if conv := nameOf(s.sends, r.ID) != "v2" && nameOf(s.sends, r.ID) != "v3"; history.Converted(r) != conv || r.VerificationID == "" {
						t.Errorf("%s: got converted %v (status %s), want %v", nameOf(s.sends, r.ID), history.Converted(r), r.Status, conv)
					}
				}
			})
		}
	})

	t.Run("PagedByCursor", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedAttempts(e)
		var got []string
		f := history.AttemptFilter{Limit: 4}
		for pages := 1; ; pages++ {
			rows, next, err := e.Store.VerificationAttempts(e.Ctx, f)
			if err != nil || pages > 2 || len(rows) > 4 {
				t.Fatalf("page %d: got %d rows, %v", pages, len(rows), err)
			}
			for _, r := range rows {
				got = append(got, nameOf(s.sends, r.ID))
			}
			if next == nil {
				break
			}
			f.After = next
		}
		if want := []string{"v5", "v4", "v3", "v1b", "v2", "v1a"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("SummaryCountsAttemptsAndConversions", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedAttempts(e)
		for _, tc := range []struct {
			name string
			f    history.AttemptFilter
			want history.AttemptsSummary
		}{
			{"All", history.AttemptFilter{}, history.AttemptsSummary{Attempts: 6, Converted: 4}},
			{"App", history.AttemptFilter{AppID: fixture.AppB}, history.AttemptsSummary{Attempts: 1}},
			{"Country", history.AttemptFilter{Country: "JP"}, history.AttemptsSummary{Attempts: 4, Converted: 3}},
			{"Channel", history.AttemptFilter{Channel: otp.ChannelSMS}, history.AttemptsSummary{Attempts: 4, Converted: 3}},
			{"Prefix", history.AttemptFilter{Prefix: "+1"}, history.AttemptsSummary{Attempts: 1}},
			{"Window", history.AttemptFilter{From: s.times["v3"]}, history.AttemptsSummary{Attempts: 3, Converted: 2}},
			{"Nothing", history.AttemptFilter{To: s.times["v1a"]}, history.AttemptsSummary{}},
		} {
			if got, err := e.Store.AttemptsSummary(e.Ctx, tc.f); err != nil || got != tc.want {
				t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
			}
		}
	})

}

// testAttemptsRefusedAndPurged holds the cases of testAttempts about bad filters and the purge.
func testAttemptsRefusedAndPurged(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("BadFiltersAreRefused", func(t *testing.T) {
		e := fixture.New(t, newStore)
		for _, tc := range []struct {
			f     history.AttemptFilter
			field string
		}{
			{history.AttemptFilter{AppID: "nope"}, "app"},
			{history.AttemptFilter{VerificationID: "nope"}, "verification"},
			{history.AttemptFilter{Country: "jp"}, "country"},
			{history.AttemptFilter{Channel: "fax"}, "channel"},
			{history.AttemptFilter{Prefix: "81"}, "prefix"},
			{history.AttemptFilter{Prefix: "+12345678"}, "prefix"},
			{history.AttemptFilter{Prefix: "+1%"}, "prefix"},
			{history.AttemptFilter{After: &history.SendCursor{ID: "x"}}, "cursor"},
		} {
			_, _, err := e.Store.VerificationAttempts(e.Ctx, tc.f)
			_, serr := e.Store.AttemptsSummary(e.Ctx, tc.f)
			for _, err := range []error{err, serr} {
				var invalid *otp.ErrInvalidRequest
				if !errors.As(err, &invalid) || invalid.Fields[tc.field] == "" {
					t.Errorf("%+v: got %v, want ErrInvalidRequest naming %s", tc.f, err, tc.field)
				}
			}
		}
		for _, f := range []history.AttemptFilter{{Address: "+819011110001"}, {VerificationID: fixture.NewID()}} {
			var invalid *otp.ErrInvalidRequest
			if _, err := e.Store.AttemptsSummary(e.Ctx, f); !errors.As(err, &invalid) {
				t.Errorf("summary by %+v: got %v, want ErrInvalidRequest", f, err)
			}
		}
	})

	t.Run("SummaryIsTheSameAfterThePurge", func(t *testing.T) {
		e := fixture.New(t, newStore)
		e.Need(fixture.Retention)
		fixture.SeedLifecycle(e)
		yes := true
		filters := []history.AttemptFilter{
			{}, {AppID: fixture.AppB}, {Country: "JP"}, {Channel: otp.ChannelSMS}, {Prefix: "+81902"}, {Converted: &yes},
			{From: fixture.Base().Add(-60 * time.Hour)}, {From: fixture.Base().Add(-60 * time.Hour), To: fixture.Base().Add(-30 * time.Hour)},
		}
		before := make([]history.AttemptsSummary, len(filters))
		for i, f := range filters {
			var err error
			if before[i], err = e.Store.AttemptsSummary(e.Ctx, hourly(f)); err != nil {
				t.Fatal(err)
			}
		}
		if before[0].Attempts == 0 || before[0].Converted == 0 || before[0].Converted == before[0].Attempts {
			t.Fatalf("seed: got %+v, want attempts, some converted", before[0])
		}
		if r := e.Pass(e.Job(retention.Options{})); r.Purged["sends"] == 0 {
			t.Fatalf("got %+v, want sends purged", r)
		}
		for i, f := range filters {
			if got, err := e.Store.AttemptsSummary(e.Ctx, hourly(f)); err != nil || got != before[i] {
				t.Errorf("%+v: got %+v, %v after the purge; want %+v as before", f, got, err, before[i])
			}
		}
	})
}

// hourly cuts a filter's times to whole hours, where rolled-up hours count the same as
// raw rows.
func hourly(f history.AttemptFilter) history.AttemptFilter {
	f.From, f.To = f.From.Truncate(time.Hour), f.To.Truncate(time.Hour)
	return f
}

// nameOf is the name a seed gave id, or id itself.
func nameOf(names map[string]string, id string) string {
	for n, v := range names {
		if strings.EqualFold(v, id) {
			return n
		}
	}
	return id
}
