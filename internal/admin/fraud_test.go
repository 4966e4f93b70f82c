package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/fraud"
	"otpgate/internal/inmem"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// liftRecorder is the limiter's part of a lift, recorded.
type liftRecorder struct {
	mu     sync.Mutex
	lifted []string
}

func (l *liftRecorder) Approve(context.Context, []rate.Limit, float64) error { return nil }

func (l *liftRecorder) Lift(_ context.Context, scope, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lifted = append(l.lifted, scope+" "+key)
	return nil
}

// fraudEnv is the admin listener with the fraud guard's admin over an in-memory store.
type fraudEnv struct {
	*adminEnv
	store   *inmem.Store
	guard   *fraud.Guard
	counter *liftRecorder
}

func newFraudEnv(t *testing.T) *fraudEnv {
	t.Helper()
	store, counter := inmem.New(), &liftRecorder{}
	r := fraud.NewReloader(store, nil, fraud.Defaults(), discardLogger())
	if err := r.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := newAdminEnv(t, func(d *Deps) { d.Fraud = fraud.NewAdmin(store, r, counter) })
	return &fraudEnv{adminEnv: e, store: store, guard: fraud.NewGuard(r, counter, store, discardLogger()), counter: counter}
}

// api calls the fraud API with the bearer token and a JSON body (none when empty).
func (e *fraudEnv) api(t *testing.T, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	h := map[string]string{}
	if body != "" {
		h["body"], h["Content-Type"] = body, "application/json"
	}
	return e.call(t, method, target, bearer(testAdminToken), h)
}

func decodeMap(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
	return m
}

func TestAdminFraudAPI(t *testing.T) {
	e := newFraudEnv(t)

	t.Run("ConfigShowsEverySetting", func(t *testing.T) {
		w := e.api(t, http.MethodGet, "/admin/api/fraud/config", "")
		m := decodeMap(t, w)
		if w.Code != http.StatusOK || m["fraud_guard"] != "enforce" || m["prefix_drop"] != 4.0 || m["fraud_block"] != "12h" || m["version"] != 0.0 {
			t.Fatalf("got %d %v", w.Code, m)
		}
		for _, name := range fraud.FieldNames() {
			if _, ok := m[name]; !ok {
				t.Errorf("answer lacks %s", name)
			}
		}
	})

	t.Run("PutSetsSomeSettingsAndAnswersAll", func(t *testing.T) {
		w := e.api(t, http.MethodPut, "/admin/api/fraud/config", `{"fraud_guard":"shadow","fraud_ratio":0.25,"limit_prefix":"10/1h"}`)
		m := decodeMap(t, w)
		if w.Code != http.StatusOK || m["fraud_guard"] != "shadow" || m["fraud_ratio"] != 0.25 || m["limit_prefix"] != "10/1h" ||
			m["version"] != 1.0 || m["applied_version"] != 1.0 || m["prefix_drop"] != 4.0 {
			t.Fatalf("got %d %v", w.Code, m)
		}
		// What GET answers can be sent back as it is.
		got := e.api(t, http.MethodGet, "/admin/api/fraud/config", "")
		if w := e.api(t, http.MethodPut, "/admin/api/fraud/config", got.Body.String()); w.Code != http.StatusOK {
			t.Errorf("PUT of a GET's answer: got %d %s", w.Code, w.Body)
		}
		actions, _ := e.store.AdminActions(context.Background(), 0)
		if len(actions) != 2 || actions[1].Action != fraud.ActionConfigChanged || !strings.Contains(actions[1].Detail, "fraud_guard enforce → shadow") ||
			!strings.Contains(actions[1].Detail, "api token") {
			t.Errorf("audit: got %+v", actions)
		}
	})

	t.Run("BadSettingsAre400NamingEachAndChangeNothing", func(t *testing.T) {
		for body, fields := range map[string][]string{
			`{"fraud_ratio":5,"prefix_drop":"x","fraud_guard":"off"}`: {"fraud_ratio", "prefix_drop"},
			`{"limit_country":"XX:10/1h"}`:                            {"limit_country"},
			`{"no_such_setting":1}`:                                   {"no_such_setting"},
			`{"fraud_guard":true}`:                                    {"fraud_guard"},
			`{}`:                                                      {"settings"},
		} {
			w := e.api(t, http.MethodPut, "/admin/api/fraud/config", body)
			p := decodeProblem(t, w)
			if w.Code != http.StatusBadRequest || p.Code != "invalid_request" {
				t.Errorf("%s: got %d %+v, want 400 invalid_request", body, w.Code, p)
				continue
			}
			for _, f := range fields {
				if p.Errors[f] == "" {
					t.Errorf("%s: errors %v do not name %s", body, p.Errors, f)
				}
			}
		}
		if w := e.api(t, http.MethodPut, "/admin/api/fraud/config", `{"fraud_guard":"off","fraud_guard":"on"}`); w.Code != http.StatusBadRequest {
			t.Errorf("duplicate keys: got %d, want 400", w.Code)
		}
		if m := decodeMap(t, e.api(t, http.MethodGet, "/admin/api/fraud/config", "")); m["version"] != 2.0 || m["fraud_guard"] != "shadow" {
			t.Errorf("after the refusals: got %v, want version 2, shadow", m)
		}
	})

	t.Run("OversizedBodyIs413NamingTheAdminCap", func(t *testing.T) {
		body := `{"note":"` + strings.Repeat("x", maxAdminBodyBytes) + `"}`
		w := e.api(t, http.MethodPost, "/admin/api/fraud/lists", body)
		p := decodeProblem(t, w)
		if want := fmt.Sprintf("must not exceed %d bytes", maxAdminBodyBytes); w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(p.Detail, want) {
			t.Errorf("got %d %q, want 413 saying %q", w.Code, p.Detail, want)
		}
	})

	t.Run("ListEntriesAreAddedListedAndRemoved", func(t *testing.T) {
		w := e.api(t, http.MethodPost, "/admin/api/fraud/lists", `{"list":"block","value":"+8190123","note":"premium"}`)
		var entry fraudEntry
		if err := json.Unmarshal(w.Body.Bytes(), &entry); w.Code != http.StatusCreated || err != nil || entry.Kind != "prefix" || entry.ID == 0 {
			t.Fatalf("POST: got %d %s", w.Code, w.Body)
		}
		if w := e.api(t, http.MethodPost, "/admin/api/fraud/lists", `{"list":"block","value":"+8190123"}`); w.Code != http.StatusBadRequest || decodeProblem(t, w).Errors["value"] == "" {
			t.Errorf("duplicate: got %d %s, want 400 naming value", w.Code, w.Body)
		}
		if w := e.api(t, http.MethodPost, "/admin/api/fraud/lists", `{"list":"safe","value":"NG"}`); w.Code != http.StatusBadRequest || decodeProblem(t, w).Errors["kind"] == "" {
			t.Errorf("a country on the safe list: got %d %s, want 400 naming kind", w.Code, w.Body)
		}
		if w := e.api(t, http.MethodPost, "/admin/api/fraud/lists", `{"list":"safe","value":"10.0.0.0/8","extra":1}`); w.Code != http.StatusBadRequest {
			t.Errorf("unknown field: got %d, want 400", w.Code)
		}
		lists := getJSON[struct{ Entries []fraudEntry }](t, e.adminEnv, "/admin/api/fraud/lists?list=block")
		if len(lists.Entries) != 1 || lists.Entries[0].Value != "+8190123" || lists.Entries[0].Note != "premium" {
			t.Errorf("GET: got %+v", lists)
		}
		target := "/admin/api/fraud/lists/" + itoa(entry.ID)
		if w := e.api(t, http.MethodDelete, target, ""); w.Code != http.StatusOK {
			t.Errorf("DELETE: got %d %s", w.Code, w.Body)
		}
		for _, path := range []string{target, "/admin/api/fraud/lists/nope"} {
			if w := e.api(t, http.MethodDelete, path, ""); w.Code != http.StatusNotFound || decodeProblem(t, w).Detail != "there is no such list entry" {
				t.Errorf("DELETE %s: got %d %s, want 404", path, w.Code, w.Body)
			}
		}
	})

	t.Run("BlocksAreListedAndLifted", func(t *testing.T) {
		gs := rate.GuardState{Scope: rate.ScopePrefix, Key: "+81901234", Blocked: true, Tripped: true, RetryAfter: 12 * time.Hour, Unapproved: 9}
		if err := e.guard.BlockStarted(context.Background(), otp.FraudTarget{Phone: "+819012345678", Region: "JP", ClientIP: "192.0.2.1"}, gs, rate.FraudExplanation{Signal: rate.SignalRecent, Scope: gs.Scope, Key: gs.Key, Action: rate.FraudTripped}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		blocks := getJSON[struct{ Blocks []fraudBlock }](t, e.adminEnv, "/admin/api/fraud/blocks")
		if len(blocks.Blocks) != 1 || !blocks.Blocks[0].Active || blocks.Blocks[0].RetryAfterSeconds < 43190 || blocks.Blocks[0].Mode != "enforce" {
			t.Fatalf("GET: got %+v", blocks)
		}
		w := e.api(t, http.MethodDelete, "/admin/api/fraud/blocks/"+blocks.Blocks[0].ID, "")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"lifted_by":"break-glass api token`) {
			t.Fatalf("DELETE: got %d %s", w.Code, w.Body)
		}
		if len(e.counter.lifted) != 1 || e.counter.lifted[0] != "prefix +81901234" {
			t.Errorf("limiter lifts: got %v", e.counter.lifted)
		}
		if got := getJSON[struct{ Blocks []fraudBlock }](t, e.adminEnv, "/admin/api/fraud/blocks"); len(got.Blocks) != 0 {
			t.Errorf("active after the lift: got %+v", got)
		}
		if got := getJSON[struct{ Blocks []fraudBlock }](t, e.adminEnv, "/admin/api/fraud/blocks?all=true"); len(got.Blocks) != 1 || got.Blocks[0].LiftedAt == nil {
			t.Errorf("all: got %+v", got)
		}
		if w := e.api(t, http.MethodDelete, "/admin/api/fraud/blocks/"+uuid.NewString(), ""); w.Code != http.StatusNotFound {
			t.Errorf("unknown block: got %d", w.Code)
		}
	})

	t.Run("Conversion", func(t *testing.T) {
		got := getJSON[struct {
			By   string
			Rows []fraudConversionRow
		}](t, e.adminEnv, "/admin/api/fraud/conversion?since=24h")
		if got.By != "country" || got.Rows == nil {
			t.Errorf("got %+v, want country rows", got)
		}
		for q, field := range map[string]string{"by=region": "by", "since=yesterday": "since"} {
			w := e.api(t, http.MethodGet, "/admin/api/fraud/conversion?"+q, "")
			if w.Code != http.StatusBadRequest || decodeProblem(t, w).Errors[field] == "" {
				t.Errorf("%s: got %d %s, want 400 naming %s", q, w.Code, w.Body, field)
			}
		}
	})

	t.Run("ABrowserChangeNeedsItsCSRFToken", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPut, "/admin/api/fraud/config", strings.NewReader(`{"fraud_guard":"off"}`))
		r.Header.Set("Authorization", basic("support", testAdminToken))
		r.Header.Set("Content-Type", "application/json")
		if w := serve(e.h, r); w.Code != http.StatusForbidden || decodeProblem(t, w).Code != "csrf_failed" {
			t.Errorf("got %d %s, want 403 csrf_failed", w.Code, w.Body)
		}
	})
}

func TestAdminFraudPage(t *testing.T) {
	e := newFraudEnv(t)
	cookie, token := e.csrfSession(t)
	form := func(t *testing.T, path string, values url.Values) *httptest.ResponseRecorder {
		t.Helper()
		values.Set(csrfField, token)
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(values.Encode()))
		r.Header.Set("Authorization", basic("support", testAdminToken))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(cookie)
		return serve(e.h, r)
	}

	t.Run("ShowsEverySection", func(t *testing.T) {
		body := e.page(t, "/admin/fraud", http.StatusOK)
		for _, want := range []string{"Active blocks", "Conversion per country", "Busiest prefixes", "Shadow would-blocks",
			"Block list", "Safe list", `name="fraud_guard" value="enforce"`, "OTP_LIMIT_COUNTRY", `href="/admin/fraud" aria-current="page"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		if strings.Contains(body, "banner") {
			t.Errorf("a banner while the guard enforces")
		}
	})

	t.Run("RuleEditorSavesAndShowsTheBanner", func(t *testing.T) {
		w := form(t, "/admin/fraud/config", url.Values{"fraud_guard": {"shadow"}, "fraud_floor_prefix": {"12"}})
		if w.Code != http.StatusSeeOther {
			t.Fatalf("got %d %s", w.Code, w.Body)
		}
		body := e.page(t, w.Header().Get("Location"), http.StatusOK)
		for _, want := range []string{"shadow</strong> mode", "The settings were saved", `name="fraud_floor_prefix" value="12"`, "fraud_config_changed"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
	})

	t.Run("ABadSettingIsShownWithWhatWasTyped", func(t *testing.T) {
		w := form(t, "/admin/fraud/config", url.Values{"fraud_ratio": {"lots"}})
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "fraud_ratio</strong>: not a number") ||
			!strings.Contains(w.Body.String(), `value="lots"`) {
			t.Errorf("got %d %s", w.Code, w.Body)
		}
	})

	t.Run("ListsAndLifts", func(t *testing.T) {
		if w := form(t, "/admin/fraud/lists", url.Values{"list": {"safe"}, "value": {"203.0.113.0/24"}, "note": {"office"}}); w.Code != http.StatusSeeOther {
			t.Fatalf("add: got %d %s", w.Code, w.Body)
		}
		if w := form(t, "/admin/fraud/lists", url.Values{"list": {"safe"}, "value": {"bogus"}}); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `value="bogus"`) {
			t.Errorf("bad entry: got %d", w.Code)
		}
		st, _ := e.store.FraudState(context.Background())
		if len(st.Entries) != 1 || st.Entries[0].Note != "office" {
			t.Fatalf("entries: got %+v", st.Entries)
		}
		if body := e.page(t, "/admin/fraud", http.StatusOK); !strings.Contains(body, "203.0.113.0/24") {
			t.Errorf("page lacks the entry")
		}
		if w := form(t, "/admin/fraud/lists/"+itoa(st.Entries[0].ID)+"/delete", url.Values{}); w.Code != http.StatusSeeOther {
			t.Errorf("remove: got %d", w.Code)
		}
		gs := rate.GuardState{Scope: rate.ScopeIPNet, Key: "198.51.100.0/24", Blocked: true, Tripped: true, RetryAfter: time.Hour}
		if err := e.guard.BlockStarted(context.Background(), otp.FraudTarget{Phone: "+819012345678", Region: "JP", ClientIP: "198.51.100.7"}, gs, rate.FraudExplanation{Signal: rate.SignalRecent, Scope: gs.Scope, Key: gs.Key, Action: rate.FraudTripped}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		blocks, _ := e.store.FraudBlocks(context.Background(), fraud.BlockFilter{Now: time.Now()})
		if len(blocks) != 1 {
			t.Fatalf("blocks: %+v", blocks)
		}
		if body := e.page(t, "/admin/fraud", http.StatusOK); !strings.Contains(body, "ip_net 198.51.100.0/24") {
			t.Errorf("page lacks the block")
		}
		if w := form(t, "/admin/fraud/blocks/"+blocks[0].ID+"/lift", url.Values{}); w.Code != http.StatusSeeOther {
			t.Errorf("lift: got %d %s", w.Code, w.Body)
		}
		if len(e.counter.lifted) != 1 {
			t.Errorf("limiter lifts: got %v", e.counter.lifted)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
