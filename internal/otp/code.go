package otp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"math/big"
)

// newCode draws n decimal digits uniformly: rand.Int rejects out-of-range draws
// instead of reducing modulo 10^n, so no code is likelier than another.
func newCode(r io.Reader, n int) (string, error) {
	max := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
	v, err := rand.Int(r, max)
	if err != nil {
		return "", fmt.Errorf("otp: draw code: %w", err)
	}
	return fmt.Sprintf("%0*s", n, v.String()), nil
}

// hashCode binds a code to its verification, so a hash leaked from one
// verification says nothing about another. The id has a fixed length, so
// plain concatenation is unambiguous.
func hashCode(secret []byte, verificationID, code string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(verificationID))
	m.Write([]byte(code))
	return m.Sum(nil)
}

// codeMatches compares against every code sent for the verification, always all
// of them and in constant time, so timing reveals neither which nor how many matched.
// A code sent for a transaction (PSD2) matches only with that transaction.
func codeMatches(secret []byte, v Verification, code string, tx Transaction) bool {
	want := hashBound(secret, v.ID, code, tx)
	match := 0
	for _, h := range v.CodeHashes {
		match |= subtle.ConstantTimeCompare(h, want)
	}
	return match == 1
}

// validCodeFormat reports whether s is exactly n ASCII digits.
func validCodeFormat(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
