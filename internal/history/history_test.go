package history_test

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/storetest/fixture"
)

func TestStatusAt(t *testing.T) {
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name   string
		status otp.Status
		now    time.Time
		want   otp.Status
	}{
		{"PendingBeforeExpiry", otp.StatusPending, expires.Add(-time.Nanosecond), otp.StatusPending},
		{"PendingAtExpiryIsExpired", otp.StatusPending, expires, otp.StatusExpired},
		{"PendingAfterExpiryIsExpired", otp.StatusPending, expires.Add(time.Hour), otp.StatusExpired},
		{"ApprovedStaysApproved", otp.StatusApproved, expires.Add(time.Hour), otp.StatusApproved},
		{"CanceledStaysCanceled", otp.StatusCanceled, expires.Add(time.Hour), otp.StatusCanceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (otp.Verification{Status: c.status, ExpiresAt: expires}).StatusAt(c.now); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestHistoryStatusOfAnUnknownSend(t *testing.T) {
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name string
		v    otp.Status
		now  time.Time
		want string
	}{
		{"WhilePending", otp.StatusPending, expires.Add(-time.Second), history.StatusUnknown},
		{"ApprovedProvesTheCodeArrived", otp.StatusApproved, expires, history.StatusApproved},
		{"ExpiredUnchecked", otp.StatusPending, expires, history.StatusExpired},
	} {
		if got := history.StatusOf(otp.SendUnknown, c.v, expires, c.now); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHistoryStatusesAreTheValidStatuses(t *testing.T) {
	got := history.Statuses()
	want := []string{history.StatusSent, history.StatusSending, history.StatusFailed, history.StatusBlocked, history.StatusDuplicate, history.StatusApproved, history.StatusExpired, history.StatusUnknown}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, s := range append(got, "") {
		if !history.ValidStatus(s) {
			t.Errorf("ValidHistoryStatus(%q): got false, want true", s)
		}
	}
	for _, s := range []string{"delivered", "blocked:phone 1/1m", "SENT"} {
		if history.ValidStatus(s) {
			t.Errorf("ValidHistoryStatus(%q): got true, want false", s)
		}
	}
}

func TestSendFilterValidate(t *testing.T) {
	t.Run("GoodFilterPasses", func(t *testing.T) {
		after := &history.SendCursor{Time: time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC), ID: "0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60"}
		if err := (history.SendFilter{Status: history.StatusBlocked, After: after}).Validate(); err != nil {
			t.Errorf("got %v, want none", err)
		}
	})
	t.Run("BadStatusAndCursorAreBothNamed", func(t *testing.T) {
		err := history.SendFilter{Status: "delivered", After: &history.SendCursor{ID: "x"}}.Validate()
		var inv *otp.ErrInvalidRequest
		want := map[string]string{
			"status": "must be one of sent, sending, failed, blocked, duplicate, approved, expired, unknown",
			"cursor": "names no send",
		}
		if !errors.As(err, &inv) || !maps.Equal(inv.Fields, want) {
			t.Errorf("got %v, want fields %v", err, want)
		}
	})
}

func TestSendFilterPage(t *testing.T) {
	rows := make([]history.SendRow, 4)
	for i := range rows {
		rows[i] = history.SendRow{ID: "0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f6" + string(rune('0'+i)), Time: time.Unix(int64(100-i), 0).UTC()}
	}
	t.Run("ExtraRowGivesTheLastRowsPosition", func(t *testing.T) {
		page, next := history.SendFilter{Limit: 3}.Page(rows)
		want := history.SendCursor{Time: rows[2].Time, ID: rows[2].ID}
		if len(page) != 3 || next == nil || *next != want {
			t.Errorf("got %d rows, next %v; want 3 and %v", len(page), next, want)
		}
	})
	t.Run("ExactPageIsTheLast", func(t *testing.T) {
		if page, next := (history.SendFilter{Limit: 4}).Page(rows); len(page) != 4 || next != nil {
			t.Errorf("got %d rows, next %v; want 4 and none", len(page), next)
		}
	})
}

func TestStatCounter(t *testing.T) {
	day := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	now := day.Add(2*time.Hour + 30*time.Minute)
	feed := func(c *history.StatCounter) {
		c.AddSends(day.Add(-time.Second), otp.SendSent, "", 9) // before the range
		c.AddSends(day.Add(time.Minute), otp.SendSent, "", 2)
		c.AddSends(day.Add(2*time.Minute), otp.SendFailed, "", 1)
		c.AddSends(day.Add(3*time.Minute), otp.SendSending, "", 1)
		c.AddSends(day.Add(3*time.Minute+30*time.Second), otp.SendUnknown, "", 1) // a send, not a failure
		c.AddSends(day.Add(4*time.Minute), otp.SendBlocked, "phone 1/1m", 2)
		c.AddSends(day.Add(5*time.Minute), otp.SendDuplicate, "duplicate 1/5s", 1)
		c.AddApprovals(day.Add(6*time.Minute), 2)
		c.AddSends(day.Add(2*time.Hour), otp.SendBlocked, "ip 10/1h", 1)
		c.AddApprovals(day.Add(2*time.Hour+time.Minute), 1)
		c.AddSends(day.Add(3*time.Hour), otp.SendSent, "", 9) // after the range
	}
	hours, err := history.NewStatCounter(day.Add(10*time.Minute), now, time.Hour)
	if err != nil {
		t.Fatalf("NewStatCounter: %v", err)
	}
	feed(hours)
	t.Run("CountsPerBucket", func(t *testing.T) {
		want := []history.StatBucket{
			{Start: day, Sends: 5, Failed: 1, Blocked: map[string]int{"phone 1/1m": 2}, Duplicates: 1, Approvals: 2, ApprovalRatio: 0.4},
			{Start: day.Add(time.Hour), Blocked: map[string]int{}},
			{Start: day.Add(2 * time.Hour), Blocked: map[string]int{"ip 10/1h": 1}, Approvals: 1},
		}
		fixture.WantBuckets(t, hours.Buckets(), want)
		if from, to := hours.Range(); !from.Equal(day) || !to.Equal(day.Add(3*time.Hour)) {
			t.Errorf("range: got [%v, %v), want [%v, %v)", from, to, day, day.Add(3*time.Hour))
		}
	})
	t.Run("HoursAddUpToTheirDay", func(t *testing.T) {
		days, err := history.NewStatCounter(now, now, 24*time.Hour)
		if err != nil {
			t.Fatalf("NewStatCounter: %v", err)
		}
		for _, b := range hours.Buckets() {
			days.AddBucket(b)
		}
		fixture.WantBuckets(t, days.Buckets(), []history.StatBucket{{
			Start: day, Sends: 5, Failed: 1, Blocked: map[string]int{"phone 1/1m": 2, "ip 10/1h": 1},
			Duplicates: 1, Approvals: 3, ApprovalRatio: 0.6,
		}})
	})
	t.Run("BadRangeIsRefusedAsStatRangeRefusesIt", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			since  time.Time
			bucket time.Duration
			field  string
		}{
			{"BucketUnderAMinute", now, 59 * time.Second, "bucket"},
			{"BucketNotWholeSeconds", now, time.Minute + time.Millisecond, "bucket"},
			{"SinceAfterNow", now.Add(time.Hour), time.Hour, "since"},
			{"TooManyBuckets", now.Add(-history.MaxStatBuckets * time.Hour), time.Hour, "since"},
		} {
			_, err := history.NewStatCounter(c.since, now, c.bucket)
			var inv *otp.ErrInvalidRequest
			if !errors.As(err, &inv) || inv.Fields[c.field] == "" {
				t.Errorf("%s: got %v, want ErrInvalidRequest naming %q", c.name, err, c.field)
			}
		}
	})
}
