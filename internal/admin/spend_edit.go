package admin

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

// errNoSuchSpendEntry answers a form for a price or budget that is gone.
var errNoSuchSpendEntry = otp.Errorf(otp.CodeNotFound, "there is no such price or budget: another change may have removed or changed it")

// spendChange is what one of the Spend page's forms does to the configuration.
type spendChange struct {
	// done names the change for the confirmation; anchor is the section to go back to.
	done, anchor string
	// edit changes a copy of the stored configuration; it sets prefix to the validator's
	// name of the entry it touched ("prices[3]."), so that problems name the form's fields.
	edit func(c spend.Config, prefix *string) (spend.Config, error)
	// refused shows the form again as it was typed, with its problems next to its fields.
	refused func(e *spendEditor, problems map[string]string)
}

// handleSpendForm applies one form of the Spend page through the service the admin API
// uses: the same validator, audit and reload. A refused change shows the page again with
// the form as typed and changes nothing; an applied one redirects to the page.
func handleSpendForm(log *slog.Logger, view *adminView, s spend.AdminService, p adminParams, form func(*http.Request, url.Values) spendChange) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		ch := form(r, r.PostForm)
		var prefix string
		_, _, err := s.EditConfig(r.Context(), func(c spend.Config) (spend.Config, error) { return ch.edit(c, &prefix) }, actorFrom(r.Context()))
		if fields, ok := invalidFields(err); ok {
			data, lerr := loadSpendPage(r, s, p)
			if lerr != nil {
				adminError(w, r, log, view, lerr)
				return
			}
			problems := formProblems(fields, prefix)
			if len(problems) == 0 {
				problems = map[string]string{"form": err.Error()}
			}
			ch.refused(&data.Editor, problems)
			data.Editor.Problems = sortedProblems(problems)
			renderSpend(w, r, view, http.StatusBadRequest, data)
			return
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/spend?done="+ch.done+"#"+ch.anchor, http.StatusSeeOther)
	})
}

// currencyChange sets the currency of the price table.
func currencyChange(_ *http.Request, q url.Values) spendChange {
	v := formText(q, "currency")
	return spendChange{done: "currency", anchor: "prices",
		edit: func(c spend.Config, _ *string) (spend.Config, error) {
			c.Currency = v
			return c, nil
		},
		refused: func(e *spendEditor, problems map[string]string) {
			e.Currency = currencyForm{Value: v, Problems: problems}
		},
	}
}

// priceAdd adds a price.
func priceAdd(_ *http.Request, q url.Values) spendChange {
	x := priceOf(q)
	return spendChange{done: "price-added", anchor: "prices",
		edit: func(c spend.Config, prefix *string) (spend.Config, error) {
			*prefix = entryPrefix("prices", len(c.Prices))
			c.Prices = append(c.Prices, x)
			return c, nil
		},
		refused: func(e *spendEditor, problems map[string]string) {
			e.NewPrice = priceFormOf(x, "", e.NewPrice.ID)
			e.NewPrice.Problems = problems
		},
	}
}

// priceChange replaces the price the form's row names.
func priceChange(_ *http.Request, q url.Values) spendChange {
	row, x := q.Get("row"), priceOf(q)
	return spendChange{done: "price-changed", anchor: "prices",
		edit: func(c spend.Config, prefix *string) (spend.Config, error) {
			i := findPrice(c, row)
			if i < 0 {
				return c, errNoSuchSpendEntry
			}
			*prefix = entryPrefix("prices", i)
			c.Prices[i] = x
			return c, nil
		},
		refused: func(e *spendEditor, problems map[string]string) {
			for i, f := range e.Prices {
				if f.Row == row {
					e.Prices[i] = priceFormOf(x, row, f.ID)
					e.Prices[i].Problems = problems
				}
			}
		},
	}
}

// priceRemove removes the price the form's row names.
func priceRemove(_ *http.Request, q url.Values) spendChange {
	row := q.Get("row")
	return spendChange{done: "price-removed", anchor: "prices",
		edit: func(c spend.Config, _ *string) (spend.Config, error) {
			i := findPrice(c, row)
			if i < 0 {
				return c, errNoSuchSpendEntry
			}
			c.Prices = slices.Delete(c.Prices, i, i+1)
			return c, nil
		},
		refused: func(*spendEditor, map[string]string) {},
	}
}

// budgetAdd adds a budget.
func budgetAdd(_ *http.Request, q url.Values) spendChange {
	b := budgetOf(q)
	return spendChange{done: "budget-added", anchor: "budget-settings",
		edit: func(c spend.Config, prefix *string) (spend.Config, error) {
			*prefix = entryPrefix("budgets", len(c.Budgets))
			c.Budgets = append(c.Budgets, b)
			return c, nil
		},
		refused: func(e *spendEditor, problems map[string]string) {
			e.NewBudget = typedBudgetForm(b, q, "")
			e.NewBudget.Problems = problems
		},
	}
}

// budgetChange replaces the budget the path names (its name may change too).
func budgetChange(r *http.Request, q url.Values) spendChange {
	was, b := chi.URLParam(r, "name"), budgetOf(q)
	return spendChange{done: "budget-changed", anchor: "budget-settings",
		edit: func(c spend.Config, prefix *string) (spend.Config, error) {
			i := findBudget(c, was)
			if i < 0 {
				return c, errNoSuchSpendEntry
			}
			*prefix = entryPrefix("budgets", i)
			c.Budgets[i] = b
			return c, nil
		},
		refused: func(e *spendEditor, problems map[string]string) {
			for i, f := range e.Budgets {
				if f.Was == was {
					e.Budgets[i] = typedBudgetForm(b, q, was)
					e.Budgets[i].Problems = problems
				}
			}
		},
	}
}

// budgetRemove removes the budget the path names.
func budgetRemove(r *http.Request, _ url.Values) spendChange {
	name := chi.URLParam(r, "name")
	return spendChange{done: "budget-removed", anchor: "budget-settings",
		edit: func(c spend.Config, _ *string) (spend.Config, error) {
			i := findBudget(c, name)
			if i < 0 {
				return c, errNoSuchSpendEntry
			}
			c.Budgets = slices.Delete(c.Budgets, i, i+1)
			return c, nil
		},
		refused: func(*spendEditor, map[string]string) {},
	}
}
