package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/spend"
)

// spendEnv is the admin listener with the spend admin over an in-memory store.
type spendEnv struct {
	*adminEnv
	store    *inmem.Store
	reloader *spend.Reloader
}

func newSpendEnv(t *testing.T) *spendEnv {
	t.Helper()
	store := inmem.New()
	r := spend.NewReloader(store, nil, spend.DefaultConfig(), discardLogger())
	if err := r.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	registry := apps.NewRegistry(store, otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp(), discardLogger())
	if err := registry.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	admin := spend.NewAdmin(store, r)
	admin.Apps = registry
	e := newAdminEnv(t, func(d *Deps) { d.Spend = admin })
	return &spendEnv{adminEnv: e, store: store, reloader: r}
}

func (e *spendEnv) api(t *testing.T, method, body string) *httptest.ResponseRecorder {
	t.Helper()
	h := map[string]string{}
	if body != "" {
		h["body"], h["Content-Type"] = body, "application/json"
	}
	return e.call(t, method, "/admin/api/spend/config", bearer(testAdminToken), h)
}

func TestAdminSpendAPI(t *testing.T) {
	e := newSpendEnv(t)

	t.Run("AFreshInstallShowsTheShippedPrices", func(t *testing.T) {
		w := e.api(t, http.MethodGet, "")
		var c spendConfigJSON
		if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || w.Code != http.StatusOK {
			t.Fatalf("got %d %s, %v", w.Code, w.Body, err)
		}
		if c.Currency != "USD" || len(c.Prices) < 50 || len(c.Budgets) != 0 || c.Version != 0 {
			t.Errorf("got %s, %d prices, %d budgets at version %d; want the shipped table and no budget", c.Currency, len(c.Prices), len(c.Budgets), c.Version)
		}
	})

	t.Run("PutReplacesTheConfigurationAndEveryInstanceAppliesIt", func(t *testing.T) {
		body := `{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":0.05},{"channel":"sms","country":"GB","prefix":"+4470","price":"0.9"}],
			"budgets":[{"name":"all","daily":"1.00","mode":"enforce"},{"name":"gb","country":"GB","monthly":30,"mode":"shadow","time_zone":"Europe/London"}]}`
		w := e.api(t, http.MethodPut, body)
		var c spendConfigJSON
		if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || w.Code != http.StatusOK {
			t.Fatalf("got %d %s, %v", w.Code, w.Body, err)
		}
		if c.Currency != "EUR" || len(c.Prices) != 2 || c.Prices[0].Price != "0.05" || len(c.Budgets) != 2 ||
			c.Budgets[1].Monthly != "30" || c.Version != 1 || c.AppliedVersion != 1 {
			t.Errorf("got %+v", c)
		}
		if snap := e.reloader.Snapshot(); snap.Prices().Currency() != "EUR" || snap.Version != 1 {
			t.Errorf("running: got %s at %d, want EUR at 1", snap.Prices().Currency(), snap.Version)
		}
		// What GET answers can be sent back as it is.
		got := e.api(t, http.MethodGet, "")
		if w := e.api(t, http.MethodPut, got.Body.String()); w.Code != http.StatusOK {
			t.Errorf("PUT of a GET's answer: got %d %s", w.Code, w.Body)
		}
		actions, _ := e.store.AdminActions(context.Background(), 0)
		if len(actions) != 2 || actions[1].Action != spend.ActionConfigChanged || !strings.Contains(actions[1].Detail, "budget all added") ||
			!strings.Contains(actions[1].Detail, "currency USD → EUR") {
			t.Errorf("audit: got %+v", actions)
		}
	})

	t.Run("BadInputNamesTheFieldAndChangesNothing", func(t *testing.T) {
		before := e.api(t, http.MethodGet, "").Body.String()
		for _, c := range []struct{ body, field string }{
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":"-0.05"}],"budgets":[]}`, "prices[0].price"},
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":-1}],"budgets":[]}`, "prices[0].price"},
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":"abc"}],"budgets":[]}`, "prices[0].price"},
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":true}],"budgets":[]}`, "prices[0].price"},
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"XX","price":"1"}],"budgets":[]}`, "prices[0].country"},
			{`{"currency":"EUR","prices":[{"channel":"fax","country":"JP","price":"1"}],"budgets":[]}`, "prices[0].channel"},
			{`{"currency":"XYZ","prices":[],"budgets":[]}`, "currency"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","mode":"enforce"}]}`, "budgets[0].daily"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","daily":"1","mode":"loud"}]}`, "budgets[0].mode"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","daily":"1","mode":"enforce","time_zone":"Mars/Olympus"}]}`, "budgets[0].time_zone"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","daily":"1","mode":"enforce","country":"ZZ"}]}`, "budgets[0].country"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"A b","daily":"1","mode":"enforce"}]}`, "budgets[0].name"},
			// What cannot be meant: an amount with spaces, a prefix outside its country, a
			// budget of no app, a month that holds less than a day.
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":" 1"}],"budgets":[]}`, "prices[0].price"},
			{`{"currency":"EUR","prices":[{"channel":"sms","country":"GB","prefix":"+33","price":"1"}],"budgets":[]}`, "prices[0].prefix"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","daily":"1 ","mode":"enforce"}]}`, "budgets[0].daily"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","app":"` + uuid.NewString() + `","daily":"1","mode":"enforce"}]}`, "budgets[0].app"},
			{`{"currency":"EUR","prices":[],"budgets":[{"name":"a","daily":"2","monthly":"1.5","mode":"enforce"}]}`, "budgets[0].monthly"},
		} {
			w := e.api(t, http.MethodPut, c.body)
			p := decodeProblem(t, w)
			if w.Code != http.StatusBadRequest || p.Code != "invalid_request" || p.Errors[c.field] == "" {
				t.Errorf("%s: got %d %+v, want 400 naming %s", c.body, w.Code, p, c.field)
			}
		}
		if after := e.api(t, http.MethodGet, "").Body.String(); after != before {
			t.Errorf("a refused change changed the configuration:\n%s\nwant\n%s", after, before)
		}
	})

	t.Run("WhatCanBeMeantIsTaken", func(t *testing.T) {
		body := `{"currency":"EUR","prices":[{"channel":"sms","country":"GB","prefix":"+447","price":"1"}],
			"budgets":[{"name":"a","app":"default","daily":"2","monthly":"2","mode":"enforce"}]}`
		if w := e.api(t, http.MethodPut, body); w.Code != http.StatusOK {
			t.Errorf("got %d %s, want 200", w.Code, w.Body)
		}
	})
}

func TestAdminSpendPage(t *testing.T) {
	e := newSpendEnv(t)
	if w := e.api(t, http.MethodPut, `{"currency":"USD","prices":[{"channel":"sms","country":"*","price":"0.05"}],
		"budgets":[{"name":"all","daily":"1.00","mode":"enforce"},{"name":"watch","daily":"2.00","mode":"enforce","fence":"shadow","fence_young":10}]}`); w.Code != http.StatusOK {
		t.Fatalf("PUT: got %d %s", w.Code, w.Body)
	}
	if _, err := e.store.BeginSend(t.Context(), otp.BeginSend{
		Phone: "+819012340001", Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "webhook", Now: time.Now().UTC(),
		TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, NewVerificationID: uuid.Must(uuid.NewV7()).String(),
		SendID: uuid.Must(uuid.NewV7()).String(), CodeHash: func(string) []byte { return []byte(testCodeHash) },
		Country: "JP", Cost: 50_000, Currency: "USD",
	}); err != nil {
		t.Fatal(err)
	}
	w := e.call(t, http.MethodGet, "/admin/spend", basic("admin", testAdminToken), nil)
	body := w.Body.String()
	for _, want := range []string{`class="budget-all"`, `<td data-label="Spent" class="spent">0.05</td>`, `<td data-label="Cap" class="cap">1.00</td>`,
		`&#43;81901234 (JP)`, `href="/admin/spend" aria-current="page"`,
		// How each budget is shared out by country (docs/spend.md, fenced budgets).
		`class="fence">by country: 3× approved spend; countries without approved history 5 % (0.05) together</td>`,
		`class="fence">by country: 3× approved spend; countries without approved history 10 % (0.20) together (shadow: reported, not refused)</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if w.Code != http.StatusOK || t.Failed() {
		t.Fatalf("got %d:\n%s", w.Code, body)
	}
}
