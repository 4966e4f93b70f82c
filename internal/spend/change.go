package spend

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/otp"
)

// AppDirectory finds apps, so that a budget of an app that does not exist is refused;
// apps.Registry implements it.
type AppDirectory interface {
	// App returns the app of id ("default" is the default app). Errors: otp.ErrNotFound.
	App(ctx context.Context, id string) (otp.App, error)
}

// ValidateChange is Validate for a configuration set in place of was. Besides Validate's
// problems it refuses, in each price and budget that was does not hold as it is, what
// cannot be meant: an amount with spaces around it, a price's prefix outside its country,
// a monthly cap below the daily one, and a budget of an app known does not know (known
// nil checks no app). A price or budget kept as was holds it is not refused again, so
// that a configuration stored by an earlier version keeps loading (Validate) and can be
// edited elsewhere.
func (c Config) ValidateChange(was Config, known func(appID string) bool) map[string]string {
	f := c.Validate()
	set := func(field, problem string) {
		if _, ok := f[field]; !ok && problem != "" {
			f[field] = problem
		}
	}
	kept := map[PriceText]bool{}
	for _, p := range was.Prices {
		kept[p] = true
	}
	for i, p := range c.Prices {
		if kept[p] {
			continue
		}
		n := fmt.Sprintf("prices[%d].", i)
		set(n+"price", untrimmed(p.Price))
		set(n+"prefix", outsideCountry(p.Country, p.Prefix))
	}
	same := map[Budget]bool{}
	for _, b := range was.Budgets {
		same[b] = true
	}
	for i, b := range c.Budgets {
		if same[b] {
			continue
		}
		n := fmt.Sprintf("budgets[%d].", i)
		set(n+"daily", untrimmed(b.Daily))
		set(n+"monthly", untrimmed(b.Monthly))
		daily, derr := ParseAmount(string(b.Daily))
		monthly, merr := ParseAmount(string(b.Monthly))
		if b.Daily != "" && b.Monthly != "" && derr == nil && merr == nil && monthly < daily {
			set(n+"monthly", "must be at least the daily cap ("+string(b.Daily)+"): a month holds every day of it")
		}
		if id, ok := otp.CanonAppID(b.App); b.App != "" && ok && known != nil && !known(id) {
			set(n+"app", "names no app: must be the id of an existing app, or default")
		}
	}
	return f
}

// untrimmed is the problem of an amount written with spaces around it; "" when it has none.
func untrimmed(a Amount) string {
	if strings.TrimSpace(string(a)) != string(a) {
		return "must be a decimal amount without spaces around it, such as 0.05"
	}
	return ""
}

// outsideCountry is the problem of a prefix that does not lie inside country: one that does
// not begin with the country's calling code. Countries that share a calling code (+1, +7,
// +44 …) are not told apart. "" when it lies inside, or when Validate refuses either.
func outsideCountry(country, prefix string) string {
	cc := phonenumbers.GetCountryCodeForRegion(country)
	if prefix == "" || cc == 0 {
		return ""
	}
	code := "+" + strconv.Itoa(cc)
	if !strings.HasPrefix(prefix, code) {
		return "must lie inside " + country + ": begin with its calling code " + code
	}
	return ""
}
