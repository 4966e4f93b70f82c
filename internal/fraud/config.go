package fraud

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Mode is how the conversion guard runs: off, shadow (it reports what it would block) or
// enforce.
type Mode string

// Guard modes.
const (
	ModeOff     Mode = "off"
	ModeShadow  Mode = "shadow"
	ModeEnforce Mode = "enforce"
)

// UnmarshalText accepts the three modes in any letter case.
func (m *Mode) UnmarshalText(text []byte) error {
	switch v := Mode(strings.ToLower(strings.TrimSpace(string(text)))); v {
	case ModeOff, ModeShadow, ModeEnforce:
		*m = v
		return nil
	}
	return errors.New("must be off, shadow or enforce")
}

// String returns the mode.
func (m Mode) String() string { return string(m) }

// Span is a length of time as Go writes durations ("90s", "12h") or in whole days ("7d").
type Span time.Duration

// UnmarshalText reads a span; it must be positive.
func (s *Span) UnmarshalText(text []byte) error {
	t := strings.TrimSpace(string(text))
	var d time.Duration
	if days, ok := strings.CutSuffix(t, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3660 {
			return errors.New("not a duration, such as 90s, 12h or 7d")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(t); err != nil {
			return errors.New("not a duration, such as 90s, 12h or 7d")
		}
	}
	if d <= 0 {
		return errors.New("must be positive")
	}
	*s = Span(d)
	return nil
}

// String renders the span as UnmarshalText reads it back.
func (s Span) String() string { return rate.FormatWindow(time.Duration(s)) }

// Config is the fraud guard's live configuration. The OTP_* variables give the values a
// fresh database starts from; afterwards the console and the admin API change it. Its
// fields are read and written by name (Set, Values), the names the admin API uses.
type Config struct {
	// Country, Prefix and IPNet are the static rules of the three scopes.
	Country CountryRules
	Prefix  Rules
	IPNet   Rules
	// PrefixDrop is how many last digits a number's prefix leaves out.
	PrefixDrop int
	// Mode is the conversion guard's mode; Block how long its trips block.
	Mode  Mode
	Block Span
	// The guard's thresholds (docs/fraud.md): the horizons of its recent and baseline
	// counts, the ratio below the baseline that trips, the prior that stands in for missing
	// history, and per scope the unapproved sends below which nothing trips.
	ShortHorizon, LongHorizon             Span
	Ratio, PriorRate, PriorWeight         float64
	FloorCountry, FloorPrefix, FloorIPNet int
	// The second generation's signals (docs/fraud.md): the surge a target's baseline volume
	// allows before its recent volume asks for a challenge, and the recent sends beyond it
	// that do; the distinct countries a network may ask for without converting; how many
	// solved sends a block admits over its whole life, less those approved (0: none); and what an approval weighs when it came implausibly fast after its send,
	// or from another network than the one that asked.
	Surge                 float64
	FloorYoungCountries   int
	YoungApprovals        int
	VolumeFloor           int
	CountriesPerNetwork   int
	BlockPass             int
	MinApprovalDelay      Span
	FastApprovalWeight    float64
	ForeignApprovalWeight float64
}

// Defaults returns the configuration otpgate ships with: no static fraud rules, the guard
// enforcing with the thresholds docs/fraud.md explains.
func Defaults() Config {
	return Config{
		PrefixDrop: 4, Mode: ModeEnforce, Block: Span(12 * time.Hour),
		ShortHorizon: Span(10 * time.Minute), LongHorizon: Span(7 * 24 * time.Hour),
		Ratio: 0.3, PriorRate: 0.6, PriorWeight: 20,
		FloorCountry: 100, FloorPrefix: 10, FloorIPNet: 10,
		Surge: 10, VolumeFloor: 30, CountriesPerNetwork: 3, BlockPass: 3, FloorYoungCountries: 20, YoungApprovals: 5,
		MinApprovalDelay: Span(800 * time.Millisecond), FastApprovalWeight: 0.25, ForeignApprovalWeight: 0.5,
	}
}

// field is one named setting of Config: where it lives, and its bounds.
type field struct {
	name string
	ptr  func(c *Config) any
	// check returns what is wrong with the value, "" when nothing.
	check func(c *Config) string
}

// fields lists Config's settings by name, in the order the console shows them.
func fields() []field {
	none := func(*Config) string { return "" }
	between := func(get func(*Config) int, lo, hi int) func(*Config) string {
		return func(c *Config) string {
			if v := get(c); v < lo || v > hi {
				return fmt.Sprintf("must be between %d and %d", lo, hi)
			}
			return ""
		}
	}
	span := func(get func(*Config) Span, lo, hi time.Duration) func(*Config) string {
		return func(c *Config) string {
			if v := time.Duration(get(c)); v < lo || v > hi {
				return fmt.Sprintf("must be between %s and %s", rate.FormatWindow(lo), rate.FormatWindow(hi))
			}
			return ""
		}
	}
	const day = 24 * time.Hour
	return []field{
		{"fraud_guard", func(c *Config) any { return &c.Mode }, none},
		{"fraud_block", func(c *Config) any { return &c.Block }, span(func(c *Config) Span { return c.Block }, time.Second, 30*day)},
		{"limit_country", func(c *Config) any { return &c.Country }, none},
		{"limit_prefix", func(c *Config) any { return &c.Prefix }, none},
		{"limit_ip_net", func(c *Config) any { return &c.IPNet }, none},
		{"prefix_drop", func(c *Config) any { return &c.PrefixDrop }, between(func(c *Config) int { return c.PrefixDrop }, 1, 8)},
		{"fraud_short_horizon", func(c *Config) any { return &c.ShortHorizon }, span(func(c *Config) Span { return c.ShortHorizon }, time.Second, 7*day)},
		{"fraud_long_horizon", func(c *Config) any { return &c.LongHorizon }, func(c *Config) string {
			if c.LongHorizon < c.ShortHorizon {
				return "must be at least the short horizon"
			}
			return span(func(c *Config) Span { return c.LongHorizon }, time.Second, 366*day)(c)
		}},
		{"fraud_ratio", func(c *Config) any { return &c.Ratio }, func(c *Config) string {
			if !(c.Ratio > 0 && c.Ratio <= 1) {
				return "must be more than 0 and at most 1"
			}
			return ""
		}},
		{"fraud_prior_rate", func(c *Config) any { return &c.PriorRate }, func(c *Config) string {
			if !(c.PriorRate >= 0 && c.PriorRate <= 1) {
				return "must be between 0 and 1"
			}
			return ""
		}},
		{"fraud_prior_weight", func(c *Config) any { return &c.PriorWeight }, func(c *Config) string {
			if !(c.PriorWeight > 0 && c.PriorWeight <= 1e6) {
				return "must be more than 0 and at most 1000000"
			}
			return ""
		}},
		{"fraud_floor_country", func(c *Config) any { return &c.FloorCountry }, between(func(c *Config) int { return c.FloorCountry }, 1, 1_000_000)},
		{"fraud_floor_prefix", func(c *Config) any { return &c.FloorPrefix }, between(func(c *Config) int { return c.FloorPrefix }, 1, 1_000_000)},
		{"fraud_floor_ip_net", func(c *Config) any { return &c.FloorIPNet }, between(func(c *Config) int { return c.FloorIPNet }, 1, 1_000_000)},
		{"fraud_surge", func(c *Config) any { return &c.Surge }, func(c *Config) string {
			if !(c.Surge >= 1 && c.Surge <= 1000) {
				return "must be between 1 and 1000"
			}
			return ""
		}},
		{"fraud_volume_floor", func(c *Config) any { return &c.VolumeFloor }, between(func(c *Config) int { return c.VolumeFloor }, 0, 1_000_000)},
		{"fraud_floor_young_countries", func(c *Config) any { return &c.FloorYoungCountries }, between(func(c *Config) int { return c.FloorYoungCountries }, 0, 1_000_000)},
		{"fraud_young_approvals", func(c *Config) any { return &c.YoungApprovals }, between(func(c *Config) int { return c.YoungApprovals }, 1, 1_000_000)},
		{"fraud_countries_per_network", func(c *Config) any { return &c.CountriesPerNetwork }, between(func(c *Config) int { return c.CountriesPerNetwork }, 0, 250)},
		{"fraud_block_pass", func(c *Config) any { return &c.BlockPass }, between(func(c *Config) int { return c.BlockPass }, 0, 100)},
		{"fraud_min_approval_delay", func(c *Config) any { return &c.MinApprovalDelay }, span(func(c *Config) Span { return c.MinApprovalDelay }, time.Millisecond, time.Minute)},
		{"fraud_fast_approval_weight", func(c *Config) any { return &c.FastApprovalWeight }, func(c *Config) string {
			if !(c.FastApprovalWeight >= 0 && c.FastApprovalWeight <= 1) {
				return "must be between 0 and 1"
			}
			return ""
		}},
		{"fraud_foreign_approval_weight", func(c *Config) any { return &c.ForeignApprovalWeight }, func(c *Config) string {
			if !(c.ForeignApprovalWeight >= 0 && c.ForeignApprovalWeight <= 1) {
				return "must be between 0 and 1"
			}
			return ""
		}},
	}
}

// FieldNames lists the settings' names, in the order the console shows them. The
// environment variable of each is OTP_ and its name in capitals.
func FieldNames() []string {
	var out []string
	for _, f := range fields() {
		out = append(out, f.name)
	}
	return out
}

// EnvName is the environment variable of a setting, such as OTP_FRAUD_GUARD.
func EnvName(field string) string { return "OTP_" + strings.ToUpper(field) }

// Numeric reports whether a setting is a number (the admin API writes it as a JSON number).
func Numeric(name string) bool {
	for _, f := range fields() {
		if f.name == name {
			switch f.ptr(&Config{}).(type) {
			case *int, *float64:
				return true
			}
		}
	}
	return false
}

// Set reads one setting from its text. Errors: *otp.ErrInvalidRequest naming the setting,
// also for an unknown name.
func (c *Config) Set(name, text string) error {
	for _, f := range fields() {
		if f.name != name {
			continue
		}
		var err error
		switch p := f.ptr(c).(type) {
		case *int:
			*p, err = strconv.Atoi(strings.TrimSpace(text))
			if err != nil {
				err = errors.New("not a whole number")
			}
		case *float64:
			*p, err = strconv.ParseFloat(strings.TrimSpace(text), 64)
			if err != nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
				err = errors.New("not a number")
			}
		case interface{ UnmarshalText([]byte) error }:
			err = p.UnmarshalText([]byte(text))
		}
		if err != nil {
			return invalid(name, err.Error())
		}
		return nil
	}
	return invalid(name, "unknown setting")
}

// Values returns every setting as text, by name, as Set reads it back.
func (c Config) Values() map[string]string {
	out := map[string]string{}
	for _, f := range fields() {
		switch p := f.ptr(&c).(type) {
		case *int:
			out[f.name] = strconv.Itoa(*p)
		case *float64:
			out[f.name] = strconv.FormatFloat(*p, 'g', -1, 64)
		case fmt.Stringer:
			out[f.name] = p.String()
		}
	}
	return out
}

// Apply returns c with the given settings set and the result validated. Errors:
// *otp.ErrInvalidRequest naming every bad setting; c is then unchanged.
func (c Config) Apply(values map[string]string) (Config, error) {
	next := c
	bad := map[string]string{}
	for name, text := range values {
		if err := next.Set(name, text); err != nil {
			var inv *otp.ErrInvalidRequest
			errors.As(err, &inv)
			for k, v := range inv.Fields {
				bad[k] = v
			}
		}
	}
	// Bounds are checked too, so that one answer names every bad setting; a setting that
	// could not be read keeps its old value meanwhile.
	var inv *otp.ErrInvalidRequest
	if err := next.Validate(); errors.As(err, &inv) {
		for k, v := range inv.Fields {
			if _, seen := bad[k]; !seen {
				bad[k] = v
			}
		}
	}
	if len(bad) > 0 {
		return c, &otp.ErrInvalidRequest{Fields: bad}
	}
	return next, nil
}

// Validate checks every setting's bounds. Errors: *otp.ErrInvalidRequest naming each bad one.
func (c Config) Validate() error {
	bad := map[string]string{}
	if c.Mode == "" {
		bad["fraud_guard"] = "must be off, shadow or enforce"
	}
	for _, f := range fields() {
		if problem := f.check(&c); problem != "" {
			bad[f.name] = problem
		}
	}
	if len(bad) > 0 {
		return &otp.ErrInvalidRequest{Fields: bad}
	}
	return nil
}

// GuardParams returns the thresholds every scope's guard shares.
func (c Config) GuardParams() rate.GuardParams {
	return rate.GuardParams{
		ShortHorizon: time.Duration(c.ShortHorizon), LongHorizon: time.Duration(c.LongHorizon),
		Ratio: c.Ratio, PriorRate: c.PriorRate, PriorWeight: c.PriorWeight, Block: time.Duration(c.Block),
		Surge: c.Surge, BlockPasses: c.BlockPass, Countries: c.CountriesPerNetwork, YoungApprovals: c.YoungApprovals,
	}
}

// invalid is a refusal naming one field.
func invalid(name, problem string) error {
	return &otp.ErrInvalidRequest{Fields: map[string]string{name: problem}}
}
