package fraud

import (
	"testing"

	"otpgate/internal/otp"
)

// TestABlockListedNumberIsNamedMasked: a send refused by a block-list entry of a whole
// number names the entry masked, as the audit log does: the refusal's reason goes into the
// history row, the hourly rollups the charts read (kept after an erasure) and the
// send.blocked event.
func TestABlockListedNumberIsNamedMasked(t *testing.T) {
	s := NewSnapshot(Defaults(), []ListEntry{mustEntry(t, "block", "+447911123456"), mustEntry(t, "block", "+234701")}, 1)
	for target, want := range map[otp.FraudTarget]string{
		{Phone: "+447911123456", Region: "GB", ClientIP: "192.0.2.1"}:  "number +447*******56",
		{Phone: "+2347011234567", Region: "NG", ClientIP: "192.0.2.1"}: "prefix +234701",
	} {
		if got := s.Screen(target); got.Blocked != want {
			t.Errorf("%s: got %q, want %q", target.Phone, got.Blocked, want)
		}
	}
}
