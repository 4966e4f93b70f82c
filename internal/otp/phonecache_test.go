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

}
