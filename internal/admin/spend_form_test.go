package admin

import (
	"encoding/json"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/spend"
)

// spendForms is the admin listener with every feature, signed in to the console as the
// admin operator (Basic with the personal token, as a browser would) with a CSRF token.
type spendForms struct {
	*fullEnv
	cookie *http.Cookie
	token  string
}

func newSpendForms(t *testing.T) *spendForms {
	t.Helper()
	e := newFullEnv(t)
	cookie, token := e.csrfSessionAs(t, basic("x", e.tokens[operators.RoleAdmin]))
	return &spendForms{fullEnv: e, cookie: cookie, token: token}
}

// tokenAs is the CSRF token the console gives the login auth for this browser's nonce:
// a token is bound to its person, so each login needs its own.
func (e *spendForms) tokenAs(t *testing.T, auth string) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/admin/limits", nil)
	r.Header.Set("Authorization", auth)
	r.AddCookie(e.cookie)
	w := serve(e.h, r)
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("GET /admin/limits: got %d, want 200 with a CSRF token", w.Code)
	}
	return m[1]
}

// post sends a console form with auth (the admin's console login when empty) and the CSRF
// token unless values already name one.
func (e *spendForms) post(t *testing.T, path string, values url.Values, auth string) *httptest.ResponseRecorder {
	t.Helper()
	if auth == "" {
		auth = basic("x", e.tokens[operators.RoleAdmin])
	}
	if !values.Has(csrfField) {
		values.Set(csrfField, e.token)
	}
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(values.Encode()))
	r.Header.Set("Authorization", auth)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(e.cookie)
	return serve(e.h, r)
}

// config is the stored configuration as the admin API answers it, versions left out.
func (e *spendForms) config(t *testing.T) spendConfigJSON {
	t.Helper()
	c := getJSON[spendConfigJSON](t, e.adminEnv, "/admin/api/spend/config")
	c.Version, c.AppliedVersion = 0, 0
	return c
}

// state is the configuration and the number of spend audit entries, to tell that a
// refused change changed nothing.
func (e *spendForms) state(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + " audit entries: " + itoa(int64(len(e.spendAudit(t))))
}

// spendAudit is the audit log's spend entries, newest first.
func (e *spendForms) spendAudit(t *testing.T) []history.AdminAction {
	t.Helper()
	entries, err := e.features.AuditLog(t.Context(), history.AuditFilter{Action: spend.ActionConfigChanged})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// seed replaces the configuration through the API with a small one.
func (e *spendForms) seed(t *testing.T) {
	t.Helper()
	w := e.call(t, http.MethodPut, "/admin/api/spend/config", bearer(testAdminToken), map[string]string{"Content-Type": "application/json",
		"body": `{"currency":"USD","prices":[{"channel":"sms","country":"*","price":"0.05"},{"channel":"sms","country":"GB","prefix":"+4470","price":"0.9"}],
		"budgets":[{"name":"all","daily":"1.00","mode":"enforce"}]}`})
	if w.Code != http.StatusOK {
		t.Fatalf("PUT: got %d %s", w.Code, w.Body)
	}
}

func TestAdminSpendForms(t *testing.T) {
	e := newSpendForms(t)
	e.seed(t)

	t.Run("EachFormChangesTheConfigurationAuditsAndApplies", func(t *testing.T) {
		for _, c := range []struct {
			name, path string
			form       url.Values
			done       string
			check      func(c spendConfigJSON) bool
		}{
			{"Currency", "/admin/spend/currency", url.Values{"currency": {" EUR "}}, "currency",
				func(c spendConfigJSON) bool { return c.Currency == "EUR" }},
			{"AddPrice", "/admin/spend/prices", url.Values{"channel": {"voice"}, "country": {"JP"}, "prefix": {"+8190"}, "provider": {"twilio-jp"}, "price": {"0.12"}}, "price-added",
				func(c spendConfigJSON) bool {
					return len(c.Prices) == 3 && c.Prices[2] == spend.PriceText{Channel: "voice", Country: "JP", Prefix: "+8190", Provider: "twilio-jp", Price: "0.12"}
				}},
			{"ChangePrice", "/admin/spend/prices/change", url.Values{"row": {"sms|GB|+4470|"}, "channel": {"sms"}, "country": {"GB"}, "prefix": {"+4471"}, "price": {"0.8"}}, "price-changed",
				func(c spendConfigJSON) bool {
					return len(c.Prices) == 3 && c.Prices[1] == spend.PriceText{Channel: "sms", Country: "GB", Prefix: "+4471", Price: "0.8"}
				}},
			{"RemovePrice", "/admin/spend/prices/remove", url.Values{"row": {"sms|*||"}}, "price-removed",
				func(c spendConfigJSON) bool { return len(c.Prices) == 2 && c.Prices[0].Country == "GB" }},
			{"AddBudget", "/admin/spend/budgets", url.Values{"name": {"jp-month"}, "country": {"JP"}, "monthly": {"30"}, "time_zone": {"Asia/Tokyo"}, "mode": {"shadow"}}, "budget-added",
				func(c spendConfigJSON) bool {
					return len(c.Budgets) == 2 && c.Budgets[1] == spend.Budget{Name: "jp-month", Country: "JP", Monthly: "30", TimeZone: "Asia/Tokyo", Mode: "shadow"}
				}},
			{"ChangeBudget", "/admin/spend/budgets/all", url.Values{"name": {"everything"}, "app": {"default"}, "daily": {"2"}, "monthly": {"40"}, "mode": {"alert"},
				"fence": {"shadow"}, "fence_headroom": {"2.5"}, "fence_young": {"4"}}, "budget-changed",
				func(c spendConfigJSON) bool {
					return len(c.Budgets) == 2 && c.Budgets[0] == spend.Budget{Name: "everything", App: "default", Daily: "2", Monthly: "40", Mode: "alert",
						Fence: "shadow", FenceHeadroom: 2.5, FenceYoung: 4}
				}},
			{"RemoveBudget", "/admin/spend/budgets/everything/remove", url.Values{}, "budget-removed",
				func(c spendConfigJSON) bool { return len(c.Budgets) == 1 && c.Budgets[0].Name == "jp-month" }},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := e.running(t)
				w := e.post(t, c.path, c.form, "")
				if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/spend?done="+c.done+"#") {
					t.Fatalf("got %d %s %s, want 303 to the page", w.Code, loc, w.Body)
				}
				if got := e.config(t); !c.check(got) {
					t.Errorf("configuration: got %+v", got)
				}
				if after := e.running(t); after != before+1 {
					t.Errorf("this instance applies version %d, want %d", after, before+1)
				}
				a := e.spendAudit(t)[0]
				if a.ActorKind != history.ActorToken || a.ActorID != e.ids[operators.RoleAdmin] || !strings.Contains(a.Detail, "by operator") {
					t.Errorf("audit actor: got %+v, want the admin", a)
				}
				var was, is spend.Config
				if json.Unmarshal([]byte(a.Before), &was) != nil || json.Unmarshal([]byte(a.After), &is) != nil {
					t.Fatalf("audit before/after: got %q / %q, want the configuration as JSON", a.Before, a.After)
				}
				if got := e.config(t); is.Currency != got.Currency || len(is.Prices) != len(got.Prices) || len(is.Budgets) != len(got.Budgets) {
					t.Errorf("audit after: got %+v, want the stored %+v", is, got)
				}
				page, _, _ := strings.Cut(w.Header().Get("Location"), "#")
				body := e.page(t, page, http.StatusOK)
				if !strings.Contains(body, "every instance applies it within 2 seconds") {
					t.Errorf("page lacks the confirmation")
				}
			})
		}
	})

	t.Run("BadInputIsShownNextToItsFieldAndChangesNothing", func(t *testing.T) {
		e.seed(t)
		for _, c := range []struct {
			name, path string
			form       url.Values
			field      string
			typed      string
		}{
			{"NegativePrice", "/admin/spend/prices", url.Values{"channel": {"sms"}, "country": {"JP"}, "price": {"-0.05"}}, "price", "-0.05"},
			{"NonNumericPrice", "/admin/spend/prices", url.Values{"channel": {"sms"}, "country": {"JP"}, "price": {"cheap"}}, "price", "cheap"},
			{"UnknownCountry", "/admin/spend/prices", url.Values{"channel": {"sms"}, "country": {"XX"}, "price": {"0.1"}}, "country", "XX"},
			{"UnknownChannel", "/admin/spend/prices", url.Values{"channel": {"fax"}, "country": {"JP"}, "price": {"0.1"}}, "channel", ""},
			{"DuplicatePrice", "/admin/spend/prices", url.Values{"channel": {"sms"}, "country": {"*"}, "price": {"0.1"}}, "country", "0.1"},
			{"ChangedPriceNonNumeric", "/admin/spend/prices/change", url.Values{"row": {"sms|GB|+4470|"}, "channel": {"sms"}, "country": {"GB"}, "prefix": {"+4470"}, "price": {"1,5"}}, "price", "1,5"},
			{"UnknownCurrency", "/admin/spend/currency", url.Values{"currency": {"XYZ"}}, "currency", "XYZ"},
			{"BudgetWithoutWindow", "/admin/spend/budgets", url.Values{"name": {"nowindow"}, "mode": {"enforce"}}, "daily", "nowindow"},
			{"BudgetBadMode", "/admin/spend/budgets", url.Values{"name": {"loud"}, "daily": {"1"}, "mode": {"loud"}}, "mode", "loud"},
			{"BudgetBadZone", "/admin/spend/budgets", url.Values{"name": {"mars"}, "daily": {"1"}, "mode": {"enforce"}, "time_zone": {"Mars/Olympus"}}, "time_zone", "Mars/Olympus"},
			{"BudgetBadFence", "/admin/spend/budgets", url.Values{"name": {"fenced"}, "daily": {"1"}, "mode": {"enforce"}, "fence": {"maybe"}}, "fence", "maybe"},
			{"BudgetBadHeadroom", "/admin/spend/budgets", url.Values{"name": {"fenced"}, "daily": {"1"}, "mode": {"enforce"}, "fence_headroom": {"lots"}}, "fence_headroom", "lots"},
			{"BudgetUnknownCountry", "/admin/spend/budgets", url.Values{"name": {"zz"}, "daily": {"1"}, "mode": {"enforce"}, "country": {"ZZ"}}, "country", "ZZ"},
			{"ChangedBudgetWithoutWindow", "/admin/spend/budgets/all", url.Values{"name": {"all"}, "mode": {"enforce"}}, "daily", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := e.state(t)
				w := e.post(t, c.path, c.form, "")
				body := html.UnescapeString(w.Body.String())
				if w.Code != http.StatusBadRequest {
					t.Fatalf("got %d, want 400 with the page", w.Code)
				}
				if !strings.Contains(body, "<strong>"+c.field+"</strong>: ") {
					t.Errorf("the problems do not name %s", c.field)
				}
				if !regexp.MustCompile(`name="`+c.field+`"[^>]*aria-invalid="true">`).MatchString(body) || !strings.Contains(body, `<span class="field-problem">`) {
					t.Errorf("no problem shown next to the field %s", c.field)
				}
				if c.typed != "" && !strings.Contains(body, `value="`+c.typed+`"`) {
					t.Errorf("the form lost what was typed (%s)", c.typed)
				}
				if after := e.state(t); after != before {
					t.Errorf("a refused change changed the configuration or the audit:\n%s\nwant\n%s", after, before)
				}
			})
		}
	})

	t.Run("AGoneEntryIsNotFoundAndChangesNothing", func(t *testing.T) {
		before := e.state(t)
		for path, form := range map[string]url.Values{
			"/admin/spend/prices/change":         {"row": {"sms|FR||"}, "channel": {"sms"}, "country": {"FR"}, "price": {"1"}},
			"/admin/spend/prices/remove":         {"row": {"sms|FR||"}},
			"/admin/spend/budgets/nobody":        {"name": {"nobody"}, "daily": {"1"}, "mode": {"enforce"}},
			"/admin/spend/budgets/nobody/remove": {},
		} {
			if w := e.post(t, path, form, ""); w.Code != http.StatusNotFound {
				t.Errorf("%s: got %d, want 404", path, w.Code)
			}
		}
		if after := e.state(t); after != before {
			t.Errorf("changed:\n%s\nwant\n%s", after, before)
		}
	})

	t.Run("ViewersAndOperatorsReadWithoutFormsAndAreRefused", func(t *testing.T) {
		before := e.state(t)
		for _, role := range []operators.Role{operators.RoleViewer, operators.RoleOperator} {
			w := e.call(t, http.MethodGet, "/admin/spend", bearer(e.tokens[role]), nil)
			body := html.UnescapeString(w.Body.String())
			if w.Code != http.StatusOK || !strings.Contains(body, `<h2 id="prices">`) || !strings.Contains(body, "+4470") ||
				!strings.Contains(body, `<tr class="budget-setting" data-budget="all">`) {
				t.Errorf("%s: got %d, want the page with the prices and budgets", role, w.Code)
			}
			if strings.Contains(body, `action="/admin/spend/`) || strings.Contains(body, "<input name=") {
				t.Errorf("%s: the page has forms", role)
			}
			for path, form := range map[string]url.Values{
				"/admin/spend/currency":           {"currency": {"EUR"}},
				"/admin/spend/prices":             {"channel": {"sms"}, "country": {"JP"}, "price": {"1"}},
				"/admin/spend/prices/change":      {"row": {"sms|*||"}, "channel": {"sms"}, "country": {"*"}, "price": {"1"}},
				"/admin/spend/prices/remove":      {"row": {"sms|*||"}},
				"/admin/spend/budgets":            {"name": {"x"}, "daily": {"1"}, "mode": {"enforce"}},
				"/admin/spend/budgets/all":        {"name": {"all"}, "daily": {"9"}, "mode": {"enforce"}},
				"/admin/spend/budgets/all/remove": {},
			} {
				for _, auth := range []string{bearer(e.tokens[role]), basic("x", e.tokens[role])} {
					form := maps.Clone(form)
					form.Set(csrfField, e.tokenAs(t, auth))
					if w := e.post(t, path, form, auth); w.Code != http.StatusForbidden || !refusedForRole(w.Body.String()) {
						t.Errorf("%s %s: got %d, want 403 for the role", role, path, w.Code)
					}
				}
			}
		}
		admin := e.page(t, "/admin/spend", http.StatusOK)
		for _, want := range []string{`action="/admin/spend/currency"`, `action="/admin/spend/prices"`, `action="/admin/spend/budgets"`,
			`action="/admin/spend/budgets/all"`, `action="/admin/spend/prices/change"`} {
			if !strings.Contains(admin, want) {
				t.Errorf("the admin's page lacks %s", want)
			}
		}
		if after := e.state(t); after != before {
			t.Errorf("changed:\n%s\nwant\n%s", after, before)
		}
	})

	t.Run("AFormNeedsItsCSRFToken", func(t *testing.T) {
		before := e.state(t)
		for _, token := range []string{"", e.otherToken()} {
			w := e.post(t, "/admin/spend/currency", url.Values{"currency": {"JPY"}, csrfField: {token}}, "")
			if w.Code != http.StatusForbidden || refusedForRole(w.Body.String()) {
				t.Errorf("token %q: got %d %s, want 403 for the CSRF token", token, w.Code, w.Body)
			}
		}
		if after := e.state(t); after != before {
			t.Errorf("changed:\n%s\nwant\n%s", after, before)
		}
	})
}

// running is the version of the configuration this instance applies.
func (e *spendForms) running(t *testing.T) int64 {
	t.Helper()
	return getJSON[spendConfigJSON](t, e.adminEnv, "/admin/api/spend/config").AppliedVersion
}
