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
