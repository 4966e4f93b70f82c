package otp

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"otpgate/internal/psd2"
)

// newCode draws n decimal digits uniformly: a 64-bit draw at or above the largest multiple
// of 10^n is drawn again instead of being reduced modulo 10^n, so no code is likelier than
// another. (Every send draws one before the limiter decides; big.Int made that a visible
// share of a refused send's time.)
func newCode(r io.Reader, n int) (string, error) {
	if n < 1 || n > 19 {
		return "", fmt.Errorf("otp: draw code: %d digits is not a code length", n)
	}
	m := uint64(1)
	for range n {
		m *= 10
	}
	limit := math.MaxUint64 - math.MaxUint64%m
	var b [8]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", fmt.Errorf("otp: draw code: %w", err)
		}
		v := binary.BigEndian.Uint64(b[:])
		if v >= limit {
			continue
		}
		v %= m
		code := make([]byte, n)
		for i := n - 1; i >= 0; i-- {
			code[i] = byte('0' + v%10)
			v /= 10
		}
		return string(code), nil
	}
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
func codeMatches(secret []byte, v Verification, code string, tx psd2.Transaction) bool {
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

// hashBound is the hash of a code sent for a transaction: hashCode's, with the amount and
// the payee, each after its length, so that no two transactions share a hash. Without a
// transaction it is hashCode's, so codes of other sends keep their hashes.
func hashBound(secret []byte, verificationID, code string, t psd2.Transaction) []byte {
	if t.IsZero() {
		return hashCode(secret, verificationID, code)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(verificationID))
	m.Write([]byte(code))
	// The code is digits only, so a separator that is no digit ends it unambiguously.
	m.Write([]byte("\x00psd2"))
	for _, part := range []string{t.Amount, t.Payee} {
		m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(part))))
		m.Write([]byte(part))
	}
	return m.Sum(nil)
}
