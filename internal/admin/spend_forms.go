package admin

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
)

// spendEditor is the configuration part of the Spend page: the currency, the price table
// and the budgets' settings, as forms for admins and as text for everyone else.
type spendEditor struct {
	// CanEdit shows the forms: the reader is an admin.
	CanEdit bool
	// Version is the stored configuration's; Applied is the one this instance applies.
	Version, Applied int64
	Currency         currencyForm
	Prices           []priceForm
	NewPrice         priceForm
	Budgets          []budgetForm
	NewBudget        budgetForm
	// Problems are those of the form just refused, named by its fields.
	Problems []fieldProblem
	// Done confirms the change the page was redirected after.
	Done     string
	Channels []string
	Modes    []string
}

// currencyForm is the currency's form.
type currencyForm struct {
	Value    string
	Problems map[string]string
}

// priceForm is one price as its form shows it.
type priceForm struct {
	// Row names the price being changed (see priceRow); empty in the add form.
	Row string
	// ID is the id of the row's form, which the row's inputs belong to.
	ID                                        string
	Channel, Country, Prefix, Provider, Price string
	Problems                                  map[string]string
}

// budgetForm is one budget as its form shows it.
type budgetForm struct {
	// Was is the budget's name as stored; empty in the add form.
	Was                                                string
	Name, App, Country, Daily, Monthly, TimeZone, Mode string
	// Fence, FenceHeadroom and FenceYoung are the fence's settings as typed; FenceOptions
	// the fence's choices, with a typed unknown one so that it shows again.
	Fence, FenceHeadroom, FenceYoung string
	FenceOptions                     []string
	Problems                         map[string]string
}

// priceRow names a price by what no other price of a valid table shares: its channel,
// country, prefix and provider. Forms name the price they change by it rather than by its
// place, which another admin's removal may have moved.
func priceRow(p spend.PriceText) string {
	return strings.Join([]string{p.Channel, p.Country, p.Prefix, p.Provider}, "|")
}

// newSpendEditor shows a configuration as forms (or text, when the reader may not edit).
func newSpendEditor(ctx context.Context, c spend.Config, version, applied int64) spendEditor {
	p, _ := operators.PrincipalFrom(ctx)
	e := spendEditor{
		CanEdit: p.Allows(operators.RoleAdmin), Version: version, Applied: applied,
		Currency: currencyForm{Value: c.Currency}, NewPrice: priceForm{ID: "add-price", Channel: otp.ChannelSMS},
		NewBudget: budgetForm{Mode: rate.BudgetEnforce, Fence: spend.FenceOn, FenceOptions: fenceOptions()},
		Channels:  otp.Channels(), Modes: []string{rate.BudgetEnforce, rate.BudgetShadow, rate.BudgetAlert},
	}
	for i, x := range c.Prices {
		e.Prices = append(e.Prices, priceForm{Row: priceRow(x), ID: "price-" + strconv.Itoa(i),
			Channel: x.Channel, Country: x.Country, Prefix: x.Prefix, Provider: x.Provider, Price: string(x.Price)})
	}
	for _, b := range c.Budgets {
		e.Budgets = append(e.Budgets, budgetFormOf(b, b.Name))
	}
	return e
}

// priceOf reads a price's form.
func priceOf(q url.Values) spend.PriceText {
	return spend.PriceText{Channel: formText(q, "channel"), Country: formText(q, "country"), Prefix: formText(q, "prefix"),
		Provider: formText(q, "provider"), Price: spend.Amount(formText(q, "price"))}
}

// budgetOf reads a budget's form.
func budgetOf(q url.Values) spend.Budget {
	b := spend.Budget{Name: formText(q, "name"), App: formText(q, "app"), Country: formText(q, "country"),
		Daily: spend.Amount(formText(q, "daily")), Monthly: spend.Amount(formText(q, "monthly")),
		TimeZone: formText(q, "time_zone"), Mode: formText(q, "mode"), Fence: formText(q, "fence"),
		FenceHeadroom: formNumber(q, "fence_headroom"), FenceYoung: formNumber(q, "fence_young")}
	if b.Fence == spend.FenceOn {
		b.Fence = "" // the default, as the API writes it
	}
	return b
}

// formNumber is a field's number: 0 when empty (the default), -1 when it is not a number,
// which the validator then names.
func formNumber(q url.Values, name string) float64 {
	s := formText(q, name)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return f
}

// numberText shows a setting's number, "" for the default (0).
func numberText(f float64) string {
	if f == 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// formText is a field's value without the spaces around it.
func formText(q url.Values, name string) string { return strings.TrimSpace(q.Get(name)) }

// priceFormOf shows a typed price again.
func priceFormOf(p spend.PriceText, row, id string) priceForm {
	return priceForm{Row: row, ID: id, Channel: p.Channel, Country: p.Country, Prefix: p.Prefix, Provider: p.Provider, Price: string(p.Price)}
}

// budgetFormOf shows a typed budget again.
func budgetFormOf(b spend.Budget, was string) budgetForm {
	fence := b.Fence
	if fence == "" {
		fence = spend.FenceOn
	}
	f := budgetForm{Was: was, Name: b.Name, App: b.App, Country: b.Country, Daily: string(b.Daily), Monthly: string(b.Monthly),
		TimeZone: b.TimeZone, Mode: b.Mode, Fence: fence, FenceHeadroom: numberText(b.FenceHeadroom), FenceYoung: numberText(b.FenceYoung),
		FenceOptions: fenceOptions()}
	if !slices.Contains(f.FenceOptions, fence) {
		f.FenceOptions = append(f.FenceOptions, fence)
	}
	return f
}

// typedBudgetForm shows a refused budget form again, its numbers as they were typed.
func typedBudgetForm(b spend.Budget, q url.Values, was string) budgetForm {
	f := budgetFormOf(b, was)
	f.FenceHeadroom, f.FenceYoung = formText(q, "fence_headroom"), formText(q, "fence_young")
	return f
}

// fenceOptions are a budget fence's choices.
func fenceOptions() []string { return []string{spend.FenceOn, spend.FenceShadow, spend.FenceOff} }

// formProblems names the validator's problems of the entry under prefix (such as
// "prices[3].") by the form's own fields ("price"); problems elsewhere keep their names.
func formProblems(fields map[string]string, prefix string) map[string]string {
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		if prefix != "" && strings.HasPrefix(k, prefix) {
			k = strings.TrimPrefix(k, prefix)
		}
		out[k] = v
	}
	return out
}

// findPrice is the place of the price named row; -1 when there is none.
func findPrice(c spend.Config, row string) int {
	return slices.IndexFunc(c.Prices, func(p spend.PriceText) bool { return priceRow(p) == row })
}

// findBudget is the place of the budget named name; -1 when there is none.
func findBudget(c spend.Config, name string) int {
	return slices.IndexFunc(c.Budgets, func(b spend.Budget) bool { return b.Name == name })
}

// entryPrefix is the validator's name of list[i]'s fields.
func entryPrefix(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]." }

// spendDoneText is the confirmation of a change the page was redirected after.
func spendDoneText(done string) string {
	what := map[string]string{
		"currency": "The currency was saved", "price-added": "The price was added", "price-changed": "The price was saved",
		"price-removed": "The price was removed", "budget-added": "The budget was added", "budget-changed": "The budget was saved",
		"budget-removed": "The budget was removed",
	}[done]
	if what == "" {
		return ""
	}
	return what + "; every instance applies it within 2 seconds."
}
