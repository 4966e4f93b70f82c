package historytest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

// seeded is history with one row of every label; labels maps send id to its label.
type seeded struct {
	labels map[string]string
	phone  map[string]string
	ip     map[string]string
	at     map[string]time.Time
	// verification is the approved verification's id.
	verification string
}

// seedHistory writes sends of every kind, one settled as unknown when the store settles
// (else it stays sending), and sets the clock to base+6m, when the verification sent at +10s
// has expired but the one sent at +5m30s has not.
func seedHistory(e *fixture.Env) seeded {
	e.T.Helper()
	s := seeded{labels: map[string]string{}, phone: map[string]string{}, ip: map[string]string{}, at: map[string]time.Time{}}
	allowed := func(phone, ip string, at time.Duration, finish otp.SendStatus, label string) otp.Verification {
		p := fixture.Params(phone, "111111", fixture.Base().Add(at))
		p.ClientIP = ip
		v := e.Send(p).Verification
		if finish != "" {
			err := e.Store.FinishSend(e.Ctx, otp.FinishSend{SendID: p.SendID, VerificationID: v.ID, Status: finish, ProviderID: "pm-" + phone, Now: p.Now})
			if err != nil {
				e.T.Fatalf("FinishSend: %v", err)
			}
		}
		s.labels[p.SendID], s.phone[p.SendID], s.ip[p.SendID], s.at[p.SendID] = label, phone, ip, p.Now
		return v
	}
	denied := func(phone, ip string, at time.Duration, status otp.SendStatus, reason, label string) {
		d := otp.DeniedSend{ID: fixture.NewID(), Phone: phone, ClientIP: ip, Status: status, Reason: reason, Time: fixture.Base().Add(at)}
		e.Denied.RecordDenied(d)
		s.labels[d.ID], s.phone[d.ID], s.ip[d.ID], s.at[d.ID] = label, phone, ip, d.Time
	}
	approved := allowed("+819000000001", "192.0.2.1", 0, otp.SendSent, history.StatusApproved)
	e.Check(approved.ID, "111111", fixture.Base().Add(30*time.Second))
	s.verification = approved.ID
	allowed("+819000000002", "192.0.2.2", 10*time.Second, otp.SendSent, history.StatusExpired)
	allowed("+819000000003", "192.0.2.1", 20*time.Second, otp.SendFailed, history.StatusFailed)
	denied("+819000000001", "192.0.2.1", 40*time.Second, otp.SendBlocked, "phone 1/1m", history.StatusBlocked)
	denied("+819000000002", "192.0.2.2", 50*time.Second, otp.SendDuplicate, "duplicate 1/5s", history.StatusDuplicate)
	allowed("+819000000004", "192.0.2.2", 5*time.Minute+30*time.Second, "", history.StatusSending)
	allowed("+819000000005", "192.0.2.1", 5*time.Minute+40*time.Second, otp.SendSent, history.StatusSent)
	denied("+819000000006", "192.0.2.3", 5*time.Minute+50*time.Second, otp.SendBlocked, "ip 10/1h", history.StatusBlocked)
	settles := fixture.Settling.Of(e.Store)
	left := history.StatusSending
	if settles {
		left = history.StatusUnknown
	}
	allowed("+819000000007", "192.0.2.3", 5*time.Minute+20*time.Second, "", left)
	e.MustFlush()
	if settles {
		// The send at +5m20s is the only one still sending that old: its server stopped.
		if n := e.Settle(fixture.Base().Add(5*time.Minute+25*time.Second), fixture.Base().Add(5*time.Minute+25*time.Second), 100); n != 1 {
			e.T.Fatalf("Settle: got %d sends settled, want 1", n)
		}
	}
	e.SetNow(fixture.Base().Add(6 * time.Minute))
	return s
}

// want lists the seeded ids that keep, newest first.
func (s seeded) want(keep func(id string) bool) []string {
	var out []string
	for id := range s.labels {
		if keep(id) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return s.at[b].Compare(s.at[a]) })
	return out
}

func testHistory(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("RowsAreLabelledByHowTheyEnded", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedHistory(e)
		for id, label := range s.labels {
			if r := e.SendRow(id); r.Status != label {
				t.Errorf("send %s: got status %q, want %q", id, r.Status, label)
			}
		}
	})

	t.Run("ListIsNewestFirst", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedHistory(e)
		rows, next := e.List(history.SendFilter{})
		if want := s.want(func(string) bool { return true }); !slices.Equal(fixture.IDs(rows), want) || next != nil {
			t.Errorf("got %v next %v, want %v and no next page", fixture.IDs(rows), next, want)
		}
		for _, r := range rows {
			if r.Phone != s.phone[r.ID] || r.ClientIP != s.ip[r.ID] || !r.Time.Equal(s.at[r.ID]) || r.Status != s.labels[r.ID] {
				t.Errorf("got %+v, want phone %s ip %s at %v label %s", r, s.phone[r.ID], s.ip[r.ID], s.at[r.ID], s.labels[r.ID])
			}
		}
	})

	t.Run("StatusFilterMatchesTheLabels", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedHistory(e)
		for _, status := range history.Statuses() {
			rows, _ := e.List(history.SendFilter{Status: status})
			want := s.want(func(id string) bool { return strings.SplitN(s.labels[id], ":", 2)[0] == status })
			// Only a store that settles sends has unknown ones.
			seeded := len(want) > 0 || status == history.StatusUnknown && !fixture.Settling.Of(e.Store)
			if !slices.Equal(fixture.IDs(rows), want) || !seeded {
				t.Errorf("status %s: got %v, want %v", status, fixture.IDs(rows), want)
			}
		}
	})

	t.Run("FiltersByPhoneIPAndTime", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedHistory(e)
		from, to := fixture.Base().Add(10*time.Second), fixture.Base().Add(5*time.Minute+40*time.Second)
		cases := []struct {
			name   string
			filter history.SendFilter
			keep   func(id string) bool
		}{
			{"Phone", history.SendFilter{Phone: "+819000000001"}, func(id string) bool { return s.phone[id] == "+819000000001" }},
			{"IP", history.SendFilter{ClientIP: "192.0.2.2"}, func(id string) bool { return s.ip[id] == "192.0.2.2" }},
			{"TimeRangeFromInclusiveToExclusive", history.SendFilter{From: from, To: to}, func(id string) bool { return !s.at[id].Before(from) && s.at[id].Before(to) }},
			{"IPAndStatus", history.SendFilter{ClientIP: "192.0.2.1", Status: history.StatusBlocked}, func(id string) bool {
				return s.ip[id] == "192.0.2.1" && strings.HasPrefix(s.labels[id], "blocked")
			}},
			{"NoMatch", history.SendFilter{Phone: "+819099999999"}, func(string) bool { return false }},
		}
		for _, c := range cases {
			rows, _ := e.List(c.filter)
			if want := s.want(c.keep); !slices.Equal(fixture.IDs(rows), want) {
				t.Errorf("%s: got %v, want %v", c.name, fixture.IDs(rows), want)
			}
		}
	})

}

// testHistoryDetail holds the cases of testHistory about one verification's detail, unknown rows and bad filters.
func testHistoryDetail(t *testing.T, newStore func(t *testing.T) fixture.Subject) {
	t.Run("VerificationDetailHasSendsAndAttemptsButNoCodes", func(t *testing.T) {
		e := fixture.New(t, newStore)
		s := seedHistory(e)
		d, err := e.Store.VerificationDetail(e.Ctx, s.verification)
		if err != nil {
			t.Fatalf("VerificationDetail: %v", err)
		}
		if d.Verification.ID != s.verification || d.Verification.Status != otp.StatusApproved || d.Verification.CodeHashes != nil {
			t.Errorf("got %+v, want the approved verification without code hashes", d.Verification)
		}
		if len(d.Sends) != 1 || d.Sends[0].Status != history.StatusApproved || d.Sends[0].ProviderMessageID != "pm-+819000000001" {
			t.Errorf("got sends %+v, want its one approved send", d.Sends)
		}
		if len(d.Attempts) != 1 || d.Attempts[0].Outcome != otp.OutcomeApproved {
			t.Errorf("got attempts %+v, want one approval", d.Attempts)
		}
		_, err = e.Store.VerificationDetail(e.Ctx, fixture.NewID())
		fixture.WantNotFound(t, "VerificationDetail(unknown)", err)
		_, err = e.Store.VerificationDetail(e.Ctx, "nope")
		fixture.WantNotFound(t, "VerificationDetail(malformed)", err)
	})

	t.Run("VerificationDetailShowsAPendingVerificationPastItsExpiryAsExpired", func(t *testing.T) {
		e := fixture.New(t, newStore)
		v := e.Send(fixture.Params("+819000000007", "111111", fixture.Base())).Verification
		for _, c := range []struct {
			name   string
			at     time.Time
			status otp.Status
			label  string
		}{
			{"BeforeExpiry", v.ExpiresAt.Add(-time.Microsecond), otp.StatusPending, history.StatusSending},
			{"AtExpiry", v.ExpiresAt, otp.StatusExpired, history.StatusExpired},
			{"AfterExpiry", v.ExpiresAt.Add(time.Hour), otp.StatusExpired, history.StatusExpired},
		} {
			e.SetNow(c.at)
			d, err := e.Store.VerificationDetail(e.Ctx, v.ID)
			if err != nil {
				t.Fatalf("%s: VerificationDetail: %v", c.name, err)
			}
			if d.Verification.Status != c.status || len(d.Sends) != 1 || d.Sends[0].Status != c.label {
				t.Errorf("%s: got status %q and sends %+v, want %q and one send labelled %q", c.name, d.Verification.Status, d.Sends, c.status, c.label)
			}
		}
		if got := e.Verification(v.ID).Status; got != otp.StatusPending {
			t.Errorf("stored status: got %q, want %q until a send or check closes it", got, otp.StatusPending)
		}
	})

	t.Run("UnknownSendIsNotFound", func(t *testing.T) {
		e := fixture.New(t, newStore)
		_, err := e.Store.Send(e.Ctx, fixture.NewID())
		fixture.WantNotFound(t, "Send(unknown)", err)
		_, err = e.Store.Send(e.Ctx, "nope")
		fixture.WantNotFound(t, "Send(malformed)", err)
	})

	t.Run("BadStatusOrCursorIsAnInvalidRequest", func(t *testing.T) {
		e := fixture.New(t, newStore)
		_, _, err := e.Store.ListSends(e.Ctx, history.SendFilter{Status: "delivered"})
		fixture.WantInvalid(t, "status", err, "status")
		for _, id := range []string{"", "x", "not-a-uuid-but-thirty-six-characters"} {
			_, _, err = e.Store.ListSends(e.Ctx, history.SendFilter{After: &history.SendCursor{Time: fixture.Base(), ID: id}})
			fixture.WantInvalid(t, "cursor "+id, err, "cursor")
		}
	})

	t.Run("DeniedRowOfAnotherStatusIsDropped", func(t *testing.T) {
		e := fixture.New(t, newStore)
		d := otp.DeniedSend{ID: fixture.NewID(), Phone: "+819012345678", Status: otp.SendSent, Time: fixture.Base()}
		e.Denied.RecordDenied(d)
		e.MustFlush()
		_, err := e.Store.Send(e.Ctx, d.ID)
		fixture.WantNotFound(t, "Send(dropped)", err)
	})
}
