package fraud

import (
	"fmt"
	"time"

	"otpgate/internal/rate"
)

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
