// Package fraud owns otpgate's fraud guard against SMS pumping: its live configuration
// (scope rules, guard mode and thresholds, safe and block lists) with the one validator the
// environment, the admin API and the stores share; the immutable snapshot a running server
// reads and the reloader that swaps it; the fraud step of sends and checks (otp.Fraud); and
// the admin service behind the console's Fraud page. The algorithm is in docs/fraud.md.
package fraud

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"otpgate/internal/contact"
	"otpgate/internal/rate"
)

// shadowSuffix marks a shadow rule, such as "10/1h:shadow".
const shadowSuffix = ":shadow"

// Rules is the rule list of one fraud scope, such as "10/1h,50/24h:shadow": rules as
// rate.ParseRules reads them, each optionally marked ":shadow" (counted and recorded, never
// refusing). "off" or nothing is no rules.
type Rules []rate.Rule

// UnmarshalText reads a rule list; errors name the bad rule.
func (rs *Rules) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	if s == "" || s == "off" {
		*rs = nil
		return nil
	}
	var out Rules
	for i, part := range strings.Split(s, ",") {
		r, err := parseRule(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("rule %d %q: %w", i+1, part, err)
		}
		if err := out.add(r); err != nil {
			return fmt.Errorf("rule %d %q: %w", i+1, part, err)
		}
	}
	*rs = out
	return nil
}

// add appends r unless the list already has a rule for its window.
func (rs *Rules) add(r rate.Rule) error {
	for _, prev := range *rs {
		if prev.Window == r.Window {
			return fmt.Errorf("a rule for window %s is already given", rate.FormatWindow(r.Window))
		}
	}
	*rs = append(*rs, r)
	return nil
}

// String renders the list as UnmarshalText reads it; no rules are "off".
func (rs Rules) String() string { return rate.Rules(rs).String() }

// parseRule reads "count/window" with an optional ":shadow".
func parseRule(s string) (rate.Rule, error) {
	body, shadow := strings.CutSuffix(s, shadowSuffix)
	if strings.Contains(body, ":") {
		return rate.Rule{}, errors.New(`want count/window, optionally followed by ":shadow"`)
	}
	rules, err := rate.ParseRules(body)
	if err != nil {
		return rate.Rule{}, err
	}
	if len(rules) != 1 {
		return rate.Rule{}, errors.New("want one rule")
	}
	r := rules[0]
	r.Shadow = shadow
	return r, nil
}

// AnyCountry is the CountryRules entry for countries without their own.
const AnyCountry = "*"

// CountryRules is the rule list per country, such as "*:500/1h,NG:10/1h,NG:50/24h:shadow":
// comma-separated entries of an ISO 3166 alpha-2 code (or * for every other country), a
// colon and a rule as Rules reads it. An entry without a country continues the one before
// ("NG:10/1h,50/24h"). "off" or nothing is no rules.
type CountryRules struct {
	// order lists the countries in the order first written; rules holds their lists.
	order []string
	rules map[string]Rules
}

// UnmarshalText reads the list; errors name the bad entry.
func (c *CountryRules) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	out := CountryRules{rules: map[string]Rules{}}
	if s == "" || s == "off" {
		*c = out
		return nil
	}
	current := ""
	for i, part := range strings.Split(s, ",") {
		p := strings.TrimSpace(part)
		if country, rule, ok := strings.Cut(p, ":"); ok && !strings.Contains(country, "/") {
			code := strings.ToUpper(strings.TrimSpace(country))
			if code != AnyCountry {
				var r contact.Region
				if err := r.UnmarshalText([]byte(code)); err != nil || code == "" {
					return fmt.Errorf("entry %d %q: %q is not an ISO 3166 country code or *", i+1, part, country)
				}
			}
			current, p = code, strings.TrimSpace(rule)
		} else if current == "" {
			return fmt.Errorf("entry %d %q: want COUNTRY:count/window, such as NG:10/1h or *:500/1h", i+1, part)
		}
		r, err := parseRule(p)
		if err != nil {
			return fmt.Errorf("entry %d %q: %w", i+1, part, err)
		}
		list, seen := out.rules[current]
		if err := list.add(r); err != nil {
			return fmt.Errorf("entry %d %q: %s: %w", i+1, part, current, err)
		}
		if !seen {
			out.order = append(out.order, current)
		}
		out.rules[current] = list
	}
	*c = out
	return nil
}

// String renders the list as UnmarshalText reads it, each country's rules together; no
// rules are "off".
func (c CountryRules) String() string {
	var parts []string
	for _, country := range c.order {
		for _, r := range c.rules[country] {
			parts = append(parts, country+":"+r.String())
		}
	}
	if len(parts) == 0 {
		return "off"
	}
	return strings.Join(parts, ",")
}

// For returns the rules of a country: its own, else those of *.
func (c CountryRules) For(country string) Rules {
	if r, ok := c.rules[country]; ok {
		return r
	}
	return c.rules[AnyCountry]
}

// Countries lists the countries with rules of their own (and * when given), in order.
func (c CountryRules) Countries() []string { return slices.Clone(c.order) }

// Empty reports whether no country has rules.
func (c CountryRules) Empty() bool { return len(c.order) == 0 }
