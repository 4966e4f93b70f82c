package spend

import (
	"errors"
	"strconv"
	"strings"
)

// Micros is an amount in millionths of the operator's currency unit: whole numbers keep
// sums exact in Redis and in SQL, and a millionth is finer than any message price.
type Micros = int64

// maxAmount bounds any price or cap (a million units), so that sums of many sends cannot
// overflow and a typo of many zeros is refused.
const maxAmount Micros = 1_000_000 * 1_000_000

// ParseAmount reads a decimal amount such as "0.0083" or "12" into micros. It refuses
// signs, exponents, more than six decimals and anything above a million units.
func ParseAmount(s string) (Micros, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, errors.New("must be a decimal amount, such as 0.05")
	}
	if len(frac) > 6 {
		return 0, errors.New("must have at most six decimals")
	}
	if !digits(whole) || !digits(frac) || len(whole) > 7 {
		if strings.HasPrefix(s, "-") {
			return 0, errors.New("must not be negative")
		}
		return 0, errors.New("must be a decimal amount, such as 0.05")
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	m := w*1_000_000 + f
	if m > maxAmount {
		return 0, errors.New("must be at most 1000000")
	}
	return m, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FormatAmount renders micros as a decimal with at least two and at most six decimals,
// as ParseAmount reads it back: 50000 is "0.05", 8300 "0.0083".
func FormatAmount(m Micros) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := strconv.FormatInt(m%1_000_000+1_000_000, 10)[1:]
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return sign + strconv.FormatInt(m/1_000_000, 10) + "." + frac
}
