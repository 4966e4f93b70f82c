package otp

import (
	"fmt"
	"testing"

	"otpgate/internal/contact"
)

func TestPhoneCache(t *testing.T) {
	t.Run("AnswersAsNormalizePhone", func(t *testing.T) {
		c := newPhoneCache()
		for _, in := range []struct{ raw, region string }{
			{"+81 90-1234-5678", ""}, {"090 1234 5678", "JP"}, {"090 1234 5678", ""}, {"+81 90-1234-567a", ""}, {"", "JP"},
		} {
			want, wantRegion, wantErr := contact.NormalizePhone(in.raw, in.region)
			for try := range 2 { // computed, then remembered
				got, region, err := c.normalize(in.raw, in.region)
				if got != want || region != wantRegion || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%q in %q, call %d: got %q %q %v, want %q %q %v", in.raw, in.region, try+1, got, region, err, want, wantRegion, wantErr)
				}
			}
		}
	})

	t.Run("KeepsAtMostTwoGenerations", func(t *testing.T) {
		c := newPhoneCache()
		for i := range 3*phoneCacheSize + 7 {
			c.normalize(fmt.Sprintf("+8190%08d", i), "")
		}
		if n := len(c.cur) + len(c.old); n > 2*phoneCacheSize {
			t.Errorf("got %d entries, want at most %d", n, 2*phoneCacheSize)
		}
	})

	t.Run("AHitInTheOlderGenerationMovesUp", func(t *testing.T) {
		c := newPhoneCache()
		c.normalize("+819012345678", "")
		for i := range phoneCacheSize {
			c.normalize(fmt.Sprintf("+8180%08d", i), "")
		}
		if _, ok := c.old[phoneKey{"+819012345678", ""}]; !ok {
			t.Fatal("want the first number in the older generation after a full one")
		}
		c.normalize("+819012345678", "")
		if _, ok := c.cur[phoneKey{"+819012345678", ""}]; !ok {
			t.Errorf("got it not in the newer generation after a hit, want it moved up")
		}
	})
}
