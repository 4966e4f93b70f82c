package otp

import (
	"bytes"
	"crypto/rand"
	"testing"

	"otpgate/internal/psd2"
)

func TestNewCode(t *testing.T) {
	for _, n := range []int{4, 6, 10} {
		seen := map[string]bool{}
		for range 200 {
			c, err := newCode(rand.Reader, n)
			if err != nil {
				t.Fatal(err)
			}
			if !validCodeFormat(c, n) {
				t.Fatalf("newCode(%d) = %q, want %d digits", n, c, n)
			}
			seen[c] = true
		}
		if n >= 6 && len(seen) < 190 {
			t.Errorf("newCode(%d): only %d distinct codes of 200", n, len(seen))
		}
	}
}

func TestNewCodeKeepsLeadingZeros(t *testing.T) {
	// An all-zero source draws 0, which must render with every digit.
	c, err := newCode(bytes.NewReader(make([]byte, 64)), 6)
	if err != nil {
		t.Fatal(err)
	}
	if c != "000000" {
		t.Errorf("got %q, want 000000", c)
	}
}

func TestNewCodeDigitsAreUniform(t *testing.T) {
	// Each position over 20,000 four-digit codes: every digit near 2,000. A modulo
	// bias as small as 2^16 mod 10 would not show, but a broken draw (always 0-7,
	// or a fixed position) would.
	var counts [4][10]int
	for range 20000 {
		c, err := newCode(rand.Reader, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			counts[i][c[i]-'0']++
		}
	}
	for i := range counts {
		for d, n := range counts[i] {
			if n < 1700 || n > 2300 {
				t.Errorf("position %d digit %d: got %d of 20000, want about 2000", i, d, n)
			}
		}
	}
}

func TestCodeMatches(t *testing.T) {
	secret := []byte("secret")
	v := Verification{ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d"}
	v.CodeHashes = [][]byte{hashCode(secret, v.ID, "111111"), hashCode(secret, v.ID, "222222")}
	tests := []struct {
		name string
		v    Verification
		code string
		want bool
	}{
		{"FirstCode", v, "111111", true},
		{"LaterCode", v, "222222", true},
		{"WrongCode", v, "333333", false},
		{"OtherVerification", Verification{ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7e", CodeHashes: v.CodeHashes}, "111111", false},
		{"NoCodes", Verification{ID: v.ID}, "111111", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := codeMatches(secret, tt.v, tt.code, psd2.Transaction{}); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if codeMatches([]byte("other secret"), v, "111111", psd2.Transaction{}) {
		t.Error("a code matched under another secret")
	}
}

func TestNewCodeRedrawsTheTopOfTheRange(t *testing.T) {
	// 2^64-1 lies past the last whole multiple of 10^6: reduced modulo 10^6 it would make
	// the low codes likelier, so it is drawn again (here: zero).
	src := append(bytes.Repeat([]byte{0xff}, 8), make([]byte, 8)...)
	c, err := newCode(bytes.NewReader(src), 6)
	if err != nil {
		t.Fatal(err)
	}
	if c != "000000" {
		t.Errorf("got %q, want the second draw, 000000", c)
	}
	if _, err := newCode(bytes.NewReader(src[:8]), 6); err == nil {
		t.Error("a source that ran dry drew a code")
	}
}
