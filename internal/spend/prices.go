package spend

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/currency"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
)

// DefaultCurrency is the currency of the shipped price table and of a fresh install.
const DefaultCurrency = "USD"

// AnyCountry is the country of a price that applies wherever no price of the number's own
// country does; email, which has no country, only has such prices.
const AnyCountry = "*"

// Price is what one message costs on one channel: per SMS segment, per WhatsApp message,
// per minute of a voice call, per email. A price names a country (or AnyCountry) and may be
// refined by an E.164 prefix of that country and by a provider instance; the most specific
// price that matches a send applies.
type Price struct {
	Channel  string `json:"channel"`
	Country  string `json:"country"`
	Prefix   string `json:"prefix,omitempty"`
	Provider string `json:"provider,omitempty"`
	Amount   Micros `json:"-"`
}

// Table is a price table in one currency, as the operator keeps it.
type Table struct {
	Currency string
	Prices   []Price
}

// Units is how many priced units a message of segments SMS segments takes on channel: its
// segments for SMS, one call minute for voice (a code read twice fits in one), one message
// otherwise.
func Units(channel string, segments int) int {
	if channel == otp.ChannelSMS || channel == "" {
		return max(segments, 1)
	}
	return 1
}

// Validate returns the problems of the table by field name ("currency",
// "prices[2].country"); none when it is sound.
func (t Table) Validate() map[string]string {
	f := map[string]string{}
	if _, err := currency.ParseISO(t.Currency); err != nil || len(t.Currency) != 3 || strings.ToUpper(t.Currency) != t.Currency {
		f["currency"] = "must be an ISO 4217 currency code in capitals, such as USD"
	}
	seen := map[Price]int{}
	for i, p := range t.Prices {
		name := fmt.Sprintf("prices[%d].", i)
		if !slices.Contains(otp.Channels(), p.Channel) {
			f[name+"channel"] = "must be one of " + strings.Join(otp.Channels(), ", ")
		}
		if p.Country != AnyCountry {
			var r contact.Region
			if err := r.UnmarshalText([]byte(p.Country)); err != nil || string(r) != p.Country || r == "" {
				f[name+"country"] = "must be * or an ISO 3166 alpha-2 code in capitals, such as JP"
			} else if p.Channel == otp.ChannelEmail {
				f[name+"country"] = "email has no country: must be *"
			}
		}
		if p.Prefix != "" {
			if !strings.HasPrefix(p.Prefix, "+") || len(p.Prefix) < 2 || len(p.Prefix) > 15 || !digits(p.Prefix[1:]) {
				f[name+"prefix"] = "must be + and up to 14 digits, such as +4470"
			} else if p.Country == AnyCountry {
				f[name+"prefix"] = "a prefix needs its country"
			}
		}
		if p.Amount < 0 {
			f[name+"price"] = "must not be negative"
		} else if p.Amount > maxAmount {
			f[name+"price"] = "must be at most 1000000"
		}
		key := p
		key.Amount = 0
		if j, ok := seen[key]; ok {
			f[name+"country"] = fmt.Sprintf("prices[%d] already prices this channel, country, prefix and provider", j)
		}
		seen[key] = i
	}
	return f
}

// Prices answers what sends cost under one table; it is immutable, so any number of sends
// may ask at once.
type Prices struct {
	currency string
	// byKey holds the prices of a channel and country ("sms|JP", "sms|*"), most specific first.
	byKey map[string][]Price
}

// Compile indexes a valid table for Cost.
func Compile(t Table) *Prices {
	p := &Prices{currency: t.Currency, byKey: map[string][]Price{}}
	for _, x := range t.Prices {
		k := x.Channel + "|" + x.Country
		p.byKey[k] = append(p.byKey[k], x)
	}
	for _, list := range p.byKey {
		// Longer prefixes first, then a named provider before any provider.
		slices.SortStableFunc(list, func(a, b Price) int {
			if c := cmp.Compare(len(b.Prefix), len(a.Prefix)); c != 0 {
				return c
			}
			return cmp.Compare(len(b.Provider), len(a.Provider))
		})
	}
	return p
}

// Currency is the table's currency.
func (p *Prices) Currency() string { return p.currency }

// Unit returns the price of one unit on channel for the number address of country through
// provider (empty when not known yet): the most specific price of the country, else of
// AnyCountry; ok is false when the table prices neither.
func (p *Prices) Unit(channel, country, address, provider string) (Micros, bool) {
	for _, c := range []string{country, AnyCountry} {
		if c == "" {
			continue
		}
		for _, x := range p.byKey[channel+"|"+c] {
			if (x.Prefix == "" || strings.HasPrefix(address, x.Prefix)) && (x.Provider == "" || x.Provider == provider) {
				return x.Amount, true
			}
		}
	}
	return 0, false
}

// Cost is the estimated cost of one message: its units times the unit price, nothing when
// the table has no price for it.
func (p *Prices) Cost(channel, country, address, provider string, segments int) Micros {
	u, _ := p.Unit(channel, country, address, provider)
	return u * int64(Units(channel, segments))
}
