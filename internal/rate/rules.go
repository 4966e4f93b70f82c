package rate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds of a rule. A sliding log keeps one entry per request, so a limit above a million
// would let one key grow to tens of megabytes; a window beyond a year is not rate limiting.
const (
	maxRuleLimit  = 1_000_000
	maxRuleWindow = 366 * 24 * time.Hour
)

// Rules is a rule list as an operator writes it, such as "1/1m,10/1h"; "off" or nothing
// is no rules. It is the one validator of a rule list, whether it comes from the
// environment, the admin API or a store.
type Rules []Rule

// UnmarshalText reads a rule list with ParseRules; "" (or only spaces) and "off" are no rules.
func (rs *Rules) UnmarshalText(text []byte) error {
	s := string(text)
	if t := strings.TrimSpace(s); t == "" || t == "off" {
		*rs = nil
		return nil
	}
	rules, err := ParseRules(s)
	if err != nil {
		return err
	}
	*rs = rules
	return nil
}

// String renders the list in the form UnmarshalText reads back; no rules are "off".
func (rs Rules) String() string {
	if len(rs) == 0 {
		return "off"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// unit returns the length of a window unit ParseRules accepts.
func unit(name string) (time.Duration, bool) {
	switch name {
	case "ms":
		return time.Millisecond, true
	case "s":
		return time.Second, true
	case "m":
		return time.Minute, true
	case "h":
		return time.Hour, true
	case "d":
		return 24 * time.Hour, true
	}
	return 0, false
}

// ParseRules reads a comma-separated list of rules such as "1/5s,10/1m,100/1h,1000/24h":
// each a positive count, a slash and a window of whole milliseconds (ms), seconds (s),
// minutes (m), hours (h) or days (d). Spaces around a rule are ignored; an empty list, an
// empty rule and two rules with the same window are errors, each naming the bad part.
func ParseRules(s string) ([]Rule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no rules: want a list like 1/1m,10/1h")
	}
	var rules []Rule
	for i, part := range strings.Split(s, ",") {
		r, err := parseRule(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("rule %d %q: %w", i+1, part, err)
		}
		for _, prev := range rules {
			if prev.Window == r.Window {
				return nil, fmt.Errorf("rule %d %q: a rule for window %s is already given", i+1, part, FormatWindow(r.Window))
			}
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// parseRule reads one "count/window".
func parseRule(s string) (Rule, error) {
	if s == "" {
		return Rule{}, errors.New("empty rule: want count/window like 10/1h")
	}
	count, window, ok := strings.Cut(s, "/")
	if !ok {
		return Rule{}, errors.New("missing \"/\": want count/window like 10/1h")
	}
	limit, err := parseCount(count, maxRuleLimit)
	if err != nil {
		return Rule{}, fmt.Errorf("count: %w", err)
	}
	d, err := parseWindow(window)
	if err != nil {
		return Rule{}, fmt.Errorf("window: %w", err)
	}
	return Rule{Limit: limit, Window: d}, nil
}

// parseWindow reads a whole number followed by a unit, such as "5s" or "24h".
func parseWindow(s string) (time.Duration, error) {
	digits := strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	name := s[len(digits):]
	if name == "" {
		return 0, fmt.Errorf("%q has no unit: want one of ms, s, m, h, d", s)
	}
	u, ok := unit(name)
	if !ok {
		return 0, fmt.Errorf("%q has unknown unit %q: want one of ms, s, m, h, d", s, name)
	}
	n, err := parseCount(digits, int(maxRuleWindow/u))
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return time.Duration(n) * u, nil
}

// parseCount reads a positive decimal number no larger than max.
func parseCount(s string, max int) (int, error) {
	if s == "" {
		return 0, errors.New("missing number")
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q is negative", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > max {
		return 0, fmt.Errorf("%q is too large (at most %d)", s, max)
	}
	if n == 0 {
		return 0, fmt.Errorf("%q is zero", s)
	}
	return n, nil
}
