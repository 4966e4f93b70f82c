package spend

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Budget periods.
const (
	PeriodDay   = "day"
	PeriodMonth = "month"
)

// Budget caps what sends may cost in a day and/or a month: over every send (global), an
// app's, a country's, or an app's in one country. Its windows begin at midnight (and on
// the first of the month) in its time zone.
type Budget struct {
	// Name names the budget in refusals, events and metrics: 1–64 of a-z, 0-9, - and _.
	Name string `json:"name"`
	// App and Country narrow the budget to one app (its id, or default) and/or one country;
	// empty is every one.
	App     string `json:"app,omitempty"`
	Country string `json:"country,omitempty"`
	// Daily and Monthly are the caps, decimal amounts of the currency; at least one is set.
	Daily   Amount `json:"daily,omitempty"`
	Monthly Amount `json:"monthly,omitempty"`
	// Mode is enforce (refuse past the cap), shadow (report what it would refuse) or alert
	// (only count and cross thresholds).
	Mode string `json:"mode"`
	// TimeZone is the IANA zone the windows follow; empty is UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Fence shares a budget without a country out by country (docs/spend.md): empty (on,
	// refusing as the budget does), shadow (report only) or off.
	Fence string `json:"fence,omitempty"`
	// FenceHeadroom multiplies what a country's approvals earn it; 0 is DefaultFenceHeadroom.
	FenceHeadroom float64 `json:"fence_headroom,omitempty"`
	// FenceYoung is the share of the cap, in percent, that the young countries may spend
	// together; 0 is DefaultFenceYoung.
	FenceYoung float64 `json:"fence_young,omitempty"`
}

// Fence modes of a budget; the empty one is FenceOn.
const (
	FenceOn     = "on"
	FenceShadow = "shadow"
	FenceOff    = "off"
)

// Defaults of a fence.
const (
	DefaultFenceHeadroom = 3
	DefaultFenceYoung    = 5
)

// Fenced reports whether the budget is shared out by country: one without a country whose
// fence is not off.
func (b Budget) Fenced() bool { return b.Country == "" && b.Fence != FenceOff }

// Headroom is the fence's headroom, its default when unset.
func (b Budget) Headroom() float64 {
	if b.FenceHeadroom > 0 {
		return b.FenceHeadroom
	}
	return DefaultFenceHeadroom
}

// YoungShare is the percentage of the cap the young countries share, its default when unset.
func (b Budget) YoungShare() float64 {
	if b.FenceYoung > 0 {
		return b.FenceYoung
	}
	return DefaultFenceYoung
}

// Kind is global, app, country or app_country, from what the budget narrows to.
func (b Budget) Kind() string {
	switch {
	case b.App != "" && b.Country != "":
		return "app_country"
	case b.App != "":
		return "app"
	case b.Country != "":
		return "country"
	}
	return "global"
}

// PriceText is one price of a Config: the price a decimal amount, as operators write it.
type PriceText struct {
	Channel  string `json:"channel"`
	Country  string `json:"country"`
	Prefix   string `json:"prefix,omitempty"`
	Provider string `json:"provider,omitempty"`
	Price    Amount `json:"price"`
}

// Amount is a decimal amount as an operator writes it. JSON may give it as a string or a
// number; either is kept as its text, so that Validate names the field of a bad one
// (a negative number, true, an object) instead of the decoder refusing the document.
type Amount string

// UnmarshalJSON keeps a string's content or any other value's text.
func (a *Amount) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = Amount(s)
		return nil
	}
	*a = Amount(b)
	return nil
}

// Config is the live spend configuration: the price table in the operator's currency and
// the budgets. It is stored as JSON, edited as a whole by the admin API, and validated by
// Validate alone, for the API and the reloader alike.
type Config struct {
	Currency string      `json:"currency"`
	Prices   []PriceText `json:"prices"`
	Budgets  []Budget    `json:"budgets"`
}

// DefaultConfig is a fresh install's: the shipped price table, in currency when it is set
// (the operator's figures then replace the shipped ones, which are in USD), and no budget.
func DefaultConfig() Config {
	t := DefaultTable()
	c := Config{Currency: t.Currency, Prices: make([]PriceText, len(t.Prices)), Budgets: []Budget{}}
	for i, p := range t.Prices {
		c.Prices[i] = PriceText{Channel: p.Channel, Country: p.Country, Prefix: p.Prefix, Provider: p.Provider, Price: Amount(FormatAmount(p.Amount))}
	}
	return c
}

// clone returns a copy whose lists the caller may change.
func (c Config) clone() Config {
	c.Prices, c.Budgets = slices.Clone(c.Prices), slices.Clone(c.Budgets)
	return c
}

// maxBudgets bounds how many budgets a config holds: each one that matches a send is a key
// of its one script call.
const maxBudgets = 100

// Validate returns the config's problems by field name, such as "prices[2].price" or
// "budgets[0].daily"; none when it is sound.
func (c Config) Validate() map[string]string {
	t, f := c.table()
	for k, v := range t.Validate() {
		if _, ok := f[k]; !ok {
			f[k] = v
		}
	}
	if len(c.Budgets) > maxBudgets {
		f["budgets"] = fmt.Sprintf("must hold at most %d budgets", maxBudgets)
	}
	names := map[string]int{}
	for i, b := range c.Budgets {
		n := fmt.Sprintf("budgets[%d].", i)
		if !validName(b.Name) {
			f[n+"name"] = "must be 1-64 of a-z, 0-9, - and _"
		} else if j, ok := names[b.Name]; ok {
			f[n+"name"] = fmt.Sprintf("budgets[%d] has this name already", j)
		}
		names[b.Name] = i
		if _, ok := otp.CanonAppID(b.App); b.App != "" && !ok {
			f[n+"app"] = "must be an app id (a UUID) or default"
		}
		if b.Country != "" {
			var r contact.Region
			if err := r.UnmarshalText([]byte(b.Country)); err != nil || string(r) != b.Country {
				f[n+"country"] = "must be an ISO 3166 alpha-2 code in capitals, such as JP"
			}
		}
		if b.Daily == "" && b.Monthly == "" {
			f[n+"daily"] = "a budget needs a window: set daily, monthly or both"
		}
		for field, v := range map[string]Amount{"daily": b.Daily, "monthly": b.Monthly} {
			if v == "" {
				continue
			}
			if m, err := ParseAmount(string(v)); err != nil {
				f[n+field] = err.Error()
			} else if m == 0 {
				f[n+field] = "must be more than 0"
			}
		}
		if !slices.Contains([]string{rate.BudgetEnforce, rate.BudgetShadow, rate.BudgetAlert}, b.Mode) {
			f[n+"mode"] = "must be enforce, shadow or alert"
		}
		if _, err := location(b.TimeZone); err != nil {
			f[n+"time_zone"] = "must be an IANA time zone, such as Asia/Tokyo, or empty for UTC"
		}
		if !slices.Contains([]string{"", FenceOn, FenceShadow, FenceOff}, b.Fence) {
			f[n+"fence"] = "must be on, shadow or off"
		}
		if !(b.FenceHeadroom == 0 || b.FenceHeadroom >= 1 && b.FenceHeadroom <= 100) {
			f[n+"fence_headroom"] = "must be 1-100 (or 0 for the default, 3)"
		}
		if !(b.FenceYoung >= 0 && b.FenceYoung <= 100) {
			f[n+"fence_young"] = "must be a percentage of the cap, 0-100 (0 for the default, 5)"
		}
	}
	return f
}

// table is the config's price table, with the problems of prices that do not parse.
func (c Config) table() (Table, map[string]string) {
	f := map[string]string{}
	t := Table{Currency: c.Currency, Prices: make([]Price, len(c.Prices))}
	for i, p := range c.Prices {
		m, err := ParseAmount(string(p.Price))
		if err != nil {
			f[fmt.Sprintf("prices[%d].price", i)] = err.Error()
		}
		t.Prices[i] = Price{Channel: p.Channel, Country: p.Country, Prefix: p.Prefix, Provider: p.Provider, Amount: m}
	}
	return t, f
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// location is the time zone of a budget's windows; empty is UTC.
func location(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, fmt.Errorf("not an IANA zone: %q", name)
	}
	return time.LoadLocation(name)
}

// DecodeConfig reads a config strictly (unknown fields, trailing data and wrong types are
// problems) and validates it. Errors: *otp.ErrInvalidRequest naming the fields.
func DecodeConfig(data []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, &otp.ErrInvalidRequest{Detail: "the spend configuration is not valid JSON of its shape: " + err.Error()}
	}
	if dec.More() {
		return Config{}, &otp.ErrInvalidRequest{Detail: "the spend configuration has trailing data"}
	}
	if f := c.Validate(); len(f) > 0 {
		return Config{}, &otp.ErrInvalidRequest{Detail: "the spend configuration has invalid fields", Fields: f}
	}
	if c.Budgets == nil {
		c.Budgets = []Budget{}
	}
	if c.Prices == nil {
		c.Prices = []PriceText{}
	}
	return c, nil
}
