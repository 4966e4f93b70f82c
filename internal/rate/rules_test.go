package rate

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// rule is a short Rule literal for tables.
func rule(limit int, window time.Duration) Rule { return Rule{Limit: limit, Window: window} }

func TestParseRules(t *testing.T) {
	day := 24 * time.Hour
	good := []struct {
		in   string
		want []Rule
	}{
		{"1/5s,10/1m,100/1h,1000/24h", []Rule{rule(1, 5*time.Second), rule(10, time.Minute), rule(100, time.Hour), rule(1000, day)}},
		{"1/1m", []Rule{rule(1, time.Minute)}},
		{" 1/1m , 10/1h ", []Rule{rule(1, time.Minute), rule(10, time.Hour)}},
		{"5/250ms", []Rule{rule(5, 250*time.Millisecond)}},
		{"3/2d", []Rule{rule(3, 2*day)}},
		{"1/60s", []Rule{rule(1, time.Minute)}},
		{"007/1m", []Rule{rule(7, time.Minute)}},
		{"1000000/366d", []Rule{rule(1_000_000, 366*day)}},
	}
	for _, tc := range good {
		got, err := ParseRules(tc.in)
		if err != nil {
			t.Errorf("ParseRules(%q): got error %v, want %v", tc.in, err, tc.want)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseRules(%q): got %v, want %v", tc.in, got, tc.want)
		}
	}

	bad := []struct {
		in, want string // want is part of the error, naming what is wrong and where
	}{
		{"", "no rules"},
		{"  ", "no rules"},
		{"1/1m,", `rule 2 "": empty rule`},
		{",1/1m", `rule 1 "": empty rule`},
		{"1/1m,,10/1h", `rule 2 "": empty rule`},
		{"0/1m", `rule 1 "0/1m": count: "0" is zero`},
		{"1/0s", `rule 1 "1/0s": window: "0s": "0" is zero`},
		{"-1/1m", `rule 1 "-1/1m": count: "-1" is negative`},
		{"1/-5s", `window: "-5s": "-5" is negative`},
		{"1/1m,10/1y", `rule 2 "10/1y": window: "1y" has unknown unit "y"`},
		{"1/5", `"5" has no unit`},
		{"1/m", `window: "m": missing number`},
		{"/1m", `count: missing number`},
		{"1m", `rule 1 "1m": missing "/"`},
		{"1.5/1m", `count: "1.5" is not a whole number`},
		{"1/1.5h", `window: "1.5h": "1.5" is not a whole number`},
		{"+1/1m", `count: "+1" is not a whole number`},
		{"1 /1m", `count: "1 " is not a whole number`},
		{"1000001/1h", `count: "1000001" is too large`},
		{"99999999999999999999/1h", `is too large`},
		{"1/367d", `window: "367d": "367" is too large (at most 366)`},
		{"1/9999999999999999999h", `is too large`},
		{"1/1m/1h", `window: "1m/1h"`},
		{"1/1m,2/60s", `rule 2 "2/60s": a rule for window 1m is already given`},
	}
	for _, tc := range bad {
		got, err := ParseRules(tc.in)
		if err == nil {
			t.Errorf("ParseRules(%q): got %v, want an error containing %q", tc.in, got, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRules(%q): got error %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParseRules checks that the parser never panics and that what it accepts reads back
// the same through Rule.String and Rules.String, which the admin console and the logs show.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		"1/5s,10/1m,100/1h,1000/24h", "1/1m", " 2/250ms ,3/2d", "0/1m", "1/1y", "1/", "/", ",",
		"1/1m,1/60s", "1/9999999999999999999h", "-1/1s", "1000000/366d", "1/1000ms", "07/01m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			return
		}
		parts := make([]string, len(rules))
		for i, r := range rules {
			if r.Limit < 1 || r.Limit > maxRuleLimit || r.Window < time.Millisecond || r.Window > maxRuleWindow {
				t.Fatalf("ParseRules(%q) accepted out-of-range rule %v", s, r)
			}
			parts[i] = r.String()
		}
		again, err := ParseRules(strings.Join(parts, ","))
		if err != nil {
			t.Fatalf("ParseRules(%q) = %v, whose String %q does not parse: %v", s, rules, parts, err)
		}
		if !slices.Equal(again, rules) {
			t.Fatalf("round trip of %q: got %v, want %v", s, again, rules)
		}
		if got, want := Rules(rules).String(), strings.Join(parts, ","); got != want {
			t.Fatalf("Rules(%v).String(): got %q, want %q", rules, got, want)
		}
	})
}

func TestRulesUnmarshalText(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Rules
	}{
		{"EmptyIsNoRules", "", nil},
		{"SpacesAreNoRules", "   ", nil},
		{"OffIsNoRules", "off", nil},
		{"OffWithSpacesIsNoRules", " off ", nil},
		{"ListIsParsed", "1/1m, 10/1h", Rules{rule(1, time.Minute), rule(10, time.Hour)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := Rules{rule(5, time.Second)} // a value that must be replaced
			if err := rs.UnmarshalText([]byte(c.in)); err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if !slices.Equal(rs, c.want) {
				t.Errorf("got %v, want %v", rs, c.want)
			}
		})
	}
	t.Run("BadRuleIsNamedAndNothingChanges", func(t *testing.T) {
		rs := Rules{rule(5, time.Second)}
		err := rs.UnmarshalText([]byte("1/1m,0/1h"))
		if want := `rule 2 "0/1h": count: "0" is zero`; err == nil || err.Error() != want {
			t.Fatalf("got %v, want %v", err, want)
		}
		if want := (Rules{rule(5, time.Second)}); !slices.Equal(rs, want) {
			t.Errorf("got %v, want %v", rs, want)
		}
	})
	t.Run("OffIsNotCaseFolded", func(t *testing.T) {
		var rs Rules
		if err := rs.UnmarshalText([]byte("OFF")); err == nil {
			t.Errorf("got %v, want an error", rs)
		}
	})
}

func TestRulesString(t *testing.T) {
	for _, c := range []struct {
		in   Rules
		want string
	}{
		{nil, "off"},
		{Rules{}, "off"},
		{Rules{rule(1, time.Minute)}, "1/1m"},
		{Rules{rule(1, 5*time.Second), rule(1000, 24*time.Hour)}, "1/5s,1000/24h"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("Rules(%v).String(): got %q, want %q", []Rule(c.in), got, c.want)
		}
	}
}
