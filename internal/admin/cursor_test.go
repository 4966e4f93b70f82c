package admin

import (
	"encoding/base64"
	"testing"
	"time"

	"otpgate/internal/history"
)

func TestCursor(t *testing.T) {
	t.Run("RoundTrips", func(t *testing.T) {
		c := &history.SendCursor{Time: time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC), ID: "0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60"}
		got, err := parseCursor(encodeCursor(c))
		if err != nil || got == nil || !got.Time.Equal(c.Time) || got.ID != c.ID {
			t.Errorf("got %+v, %v; want %+v", got, err, c)
		}
	})
	t.Run("NoneIsEmpty", func(t *testing.T) {
		if s := encodeCursor(nil); s != "" {
			t.Errorf("got %q, want empty", s)
		}
		if c, err := parseCursor(""); c != nil || err != nil {
			t.Errorf("got %+v, %v; want none", c, err)
		}
	})
	for _, bad := range []string{"!!", base64.RawURLEncoding.EncodeToString([]byte("1.x")), base64.RawURLEncoding.EncodeToString([]byte("x.0190a5c2-7b3e-7c1d-9f2a-1b2c3d4e5f60"))} {
		t.Run("Refuses"+bad, func(t *testing.T) {
			_, err := parseCursor(bad)
			if fields, ok := invalidFields(err); !ok || fields["cursor"] != badCursor {
				t.Errorf("got %v, want an invalid request naming the cursor", err)
			}
		})
	}
}

func TestStatusLabel(t *testing.T) {
	for _, c := range []struct {
		row  history.SendRow
		want string
	}{
		{history.SendRow{Status: history.StatusBlocked, Reason: "phone 1/1m"}, "blocked:phone 1/1m"},
		{history.SendRow{Status: history.StatusBlocked}, "blocked"},
		{history.SendRow{Status: history.StatusDuplicate, Reason: "duplicate 1/5s"}, "duplicate"},
		{history.SendRow{Status: history.StatusApproved}, "approved"},
	} {
		if got := statusLabel(c.row); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
