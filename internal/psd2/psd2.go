// Package psd2 is the payment a code confirms, for the dynamic linking that PSD2's strong
// customer authentication requires: its amount and payee, and what an app with PSD2 must
// be given on every send and check. The kernel binds a code's hash to it and messages name
// it; it imports nothing of otpgate.
package psd2

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Transaction is the payment a code confirms, for the dynamic linking PSD2's strong
// customer authentication requires: the code is bound to the amount and the payee, so a
// code given for one payment does not approve another. The zero Transaction binds nothing.
type Transaction struct {
	// Amount is the sum as the user reads it, with its currency: "€39.99", "EUR 39.99", "39,99 €".
	Amount string
	// Payee is who is paid, as the user reads it.
	Payee string
}

// IsZero reports whether the transaction binds nothing.
func (t Transaction) IsZero() bool { return t.Amount == "" && t.Payee == "" }

// Bounds of a transaction: both parts go out in the message, so they stay short. A
// payee is no longer than the one templates are tried with (templates.SamplePayeeLen).
const (
	maxAmountLen = 32
	MaxPayeeLen  = 64
)

// amountPattern is a number with at most one currency, before or after it: a symbol
// (any of Unicode's currency signs) or an ISO 4217 code. No thousands separators: the
// one decimal separator may be a point or a comma, as the user's locale writes it.
var amountPattern = regexp.MustCompile(`^(?:(?:\p{Sc}|[A-Z]{3}) ?)?[0-9]{1,15}(?:[.,][0-9]{1,4})?$|^[0-9]{1,15}(?:[.,][0-9]{1,4})? ?(?:\p{Sc}|[A-Z]{3})$`)

// Check says what is wrong with the transaction of a send or check for an app, by field
// ("amount", "payee"), into f; enabled is whether the app has PSD2. An app with PSD2 needs
// both parts on every send and check; an app without it takes neither, so that nobody
// believes a payment was bound when it was not.
func Check(t Transaction, enabled bool, f map[string]string) {
	if !enabled {
		for name, v := range map[string]string{"amount": t.Amount, "payee": t.Payee} {
			if v != "" {
				f[name] = "is only taken by an app with PSD2 enabled"
			}
		}
		return
	}
	switch {
	case t.Amount == "":
		f["amount"] = "is required: the app has PSD2 enabled"
	case len(t.Amount) > maxAmountLen || !utf8.ValidString(t.Amount) || !amountPattern.MatchString(t.Amount):
		f["amount"] = fmt.Sprintf(`must be a number with at most 4 decimals and at most one currency symbol or ISO 4217 code ("€39.99", "EUR 39,99"), at most %d bytes`, maxAmountLen)
	}
	switch {
	case t.Payee == "":
		f["payee"] = "is required: the app has PSD2 enabled"
	case !utf8.ValidString(t.Payee):
		f["payee"] = "must be valid UTF-8"
	case strings.ContainsFunc(t.Payee, func(r rune) bool {
		return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
	}):
		f["payee"] = "must not hold line breaks, control or formatting characters"
	case strings.TrimSpace(t.Payee) != t.Payee:
		f["payee"] = "must not start or end with spaces"
	case utf8.RuneCountInString(t.Payee) > MaxPayeeLen:
		f["payee"] = fmt.Sprintf("must be at most %d characters", MaxPayeeLen)
	}
}
