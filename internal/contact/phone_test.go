package contact

import (
	"errors"
	"testing"
)

func TestNormalizePhone(t *testing.T) {
	tests := []struct {
		name, raw, region string
		want, wantRegion  string
	}{
		{"E164", "+819012345678", "", "+819012345678", "JP"},
		{"SpacesAndDashes", "+81 90-1234-5678", "", "+819012345678", "JP"},
		{"NationalWithRegion", "090 1234 5678", "JP", "+819012345678", "JP"},
		{"Brackets", "(090) 1234-5678", "JP", "+819012345678", "JP"},
		{"FullWidthDigits", "０９０−１２３４−５６７８", "JP", "+819012345678", "JP"},
		{"FullWidthPlus", "＋８１ ９０ １２３４ ５６７８", "", "+819012345678", "JP"},
		{"Dots", "+1.415.555.2671", "", "+14155552671", "US"},
		{"LowercaseRegion", "415 555 2671", "us", "+14155552671", "US"},
		{"OtherRegionWithPlus", "+44 20 7946 0958", "JP", "+442079460958", "GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, region, err := NormalizePhone(tt.raw, tt.region)
			if err != nil {
				t.Fatalf("NormalizePhone(%q): %v", tt.raw, err)
			}
			if got != tt.want || region != tt.wantRegion {
				t.Errorf("got %s %s, want %s %s", got, region, tt.want, tt.wantRegion)
			}
		})
	}
}

func TestNormalizePhoneRefuses(t *testing.T) {
	tests := []struct{ name, raw, region string }{
		{"Empty", "", "JP"},
		{"Blank", "   ", "JP"},
		{"Letters", "+1 800 FLOWERS", ""},
		{"Extension", "+81 90 1234 5678 ext 9", ""},
		{"TooShort", "+81 90", ""},
		{"InvalidNumber", "+81 00 0000 0000", ""},
		{"NoPlusNoRegion", "09012345678", ""},
		{"PlusInMiddle", "090+12345678", "JP"},
		{"TooLong", "+8190123456789012345678901234567890123456789012345678901234567890123", ""},
		{"Emoji", "+81 90 1234 5678 ☎", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := NormalizePhone(tt.raw, tt.region)
			var invalid *ErrInvalidPhone
			if !errors.As(err, &invalid) {
				t.Errorf("NormalizePhone(%q) = %q, %v; want *ErrInvalidPhone", tt.raw, got, err)
			}
		})
	}
}

func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{"+819012345678", "090 1234 5678", "０９０−１２３４−５６７８", "(+1) 415-555-2671", "", "+", "++1", "1-800-FLOWERS"} {
		f.Add(s, "JP")
	}
	f.Fuzz(func(t *testing.T, raw, region string) {
		got, _, err := NormalizePhone(raw, region)
		if err != nil {
			var invalid *ErrInvalidPhone
			if !errors.As(err, &invalid) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// Normalising is idempotent: the E.164 form reads back as itself.
		again, _, err := NormalizePhone(got, "")
		if err != nil || again != got {
			t.Fatalf("NormalizePhone(%q) = %q, but that normalises to %q, %v", raw, got, again, err)
		}
	})
}
