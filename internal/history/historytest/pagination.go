package historytest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// seedDenied records n refused sends, two per timestamp so that ids break ties, and
// returns their ids newest first.
func seedDenied(e *fixture.Env, n int, from time.Time) []string {
	e.T.Helper()
	rows := make([]otp.DeniedSend, n)
	for i := range rows {
		rows[i] = otp.DeniedSend{
			ID: fixture.NewID(), Phone: fmt.Sprintf("+8190%08d", i%7), ClientIP: "192.0.2.9",
			Status: otp.SendBlocked, Reason: "phone 1/1m", Time: from.Add(time.Duration(i/2) * time.Second),
		}
		e.Denied.RecordDenied(rows[i])
	}
	e.MustFlush()
	slices.SortFunc(rows, func(a, b otp.DeniedSend) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID) // canonical uuids sort as Postgres sorts uuid values
	})
	out := make([]string, n)
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// pageAll follows cursors from the first page to the last.
func pageAll(e *fixture.Env, f history.SendFilter, during func()) []string {
	e.T.Helper()
	var out []string
	for pages := 0; ; pages++ {
		if pages > 1000 {
			e.T.Fatal("pagination does not end")
		}
		rows, next := e.List(f)
		out = append(out, fixture.IDs(rows)...)
		if next == nil {
			return out
		}
		f.After = next
		if during != nil {
			during()
		}
	}
}

func testPagination(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("PagesCoverEveryRowOnceInOrder", func(t *testing.T) {
		e := fixture.New(t, newStore)
		want := seedDenied(e, 25, fixture.Base())
		if got := pageAll(e, history.SendFilter{Limit: 7}, nil); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		rows, next := e.List(history.SendFilter{Limit: 25})
		if len(rows) != 25 || next != nil {
			t.Errorf("exact page: got %d rows, next %v; want 25 and no next page", len(rows), next)
		}
	})

	t.Run("FilteredPagesCoverEveryMatchOnce", func(t *testing.T) {
		e := fixture.New(t, newStore)
		all := seedDenied(e, 40, fixture.Base())
		var want []string
		for _, id := range all {
			if r := e.SendRow(id); r.Phone == "+819000000003" {
				want = append(want, id)
			}
		}
		if got := pageAll(e, history.SendFilter{Phone: "+819000000003", Status: history.StatusBlocked, Limit: 2}, nil); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("LimitDefaultsAndIsCapped", func(t *testing.T) {
		e := fixture.New(t, newStore)
		seedDenied(e, history.MaxListLimit+10, fixture.Base())
		if rows, next := e.List(history.SendFilter{}); len(rows) != history.DefaultListLimit || next == nil {
			t.Errorf("no limit: got %d rows, next %v; want %d and a next page", len(rows), next, history.DefaultListLimit)
		}
		if rows, next := e.List(history.SendFilter{Limit: 10_000}); len(rows) != history.MaxListLimit || next == nil {
			t.Errorf("huge limit: got %d rows, next %v; want %d and a next page", len(rows), next, history.MaxListLimit)
		}
	})

	t.Run("PagesAreStableUnderConcurrentInserts", func(t *testing.T) {
		e := fixture.New(t, newStore)
		want := seedDenied(e, 150, fixture.Base())
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { // newer sends, and older ones landing between pages
			for i := range 300 {
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Microsecond):
				}
				for _, p := range []otp.BeginSend{
					fixture.Params(fmt.Sprintf("+8180%08d", i), "111111", fixture.Base().Add(time.Hour+time.Duration(i)*time.Millisecond)),
					fixture.Params(fmt.Sprintf("+8170%08d", i), "111111", fixture.Base().Add(time.Duration(i%75)*time.Second)),
				} {
					if _, err := e.Store.BeginSend(e.Ctx, p); err != nil {
						t.Errorf("BeginSend: %v", err)
						return
					}
				}
			}
		})
		got := pageAll(e, history.SendFilter{ClientIP: "192.0.2.9", Limit: 10}, func() { time.Sleep(time.Millisecond) })
		all := pageAll(e, history.SendFilter{Limit: 13}, nil)
		close(stop)
		wg.Wait()
		if !slices.Equal(got, want) {
			t.Errorf("filtered: got %d ids, want the %d seeded in order", len(got), len(want))
		}
		seen := map[string]int{}
		for _, id := range all {
			seen[id]++
		}
		for _, id := range want {
			if seen[id] != 1 {
				t.Errorf("seeded row %s seen %d times, want once", id, seen[id])
			}
		}
		for id, n := range seen {
			if n > 1 {
				t.Errorf("row %s seen %d times", id, n)
			}
		}
	})
}
