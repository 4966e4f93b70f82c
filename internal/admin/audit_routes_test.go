package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/postgres"
	"otpgate/internal/rate"
	"otpgate/internal/spend"
	"otpgate/internal/testenv"
	"otpgate/internal/totp"
)

// unauditedWrites are the write routes that change nothing the service keeps, with why.
var unauditedWrites = map[string]string{
	// A console sign-in is a sealed cookie the browser holds; signing out clears it and
	// nothing on the server. Sign-ins are audited (operator_signin).
	"POST /admin/logout": "clears the caller's own cookie",
}

// auditFixture is what one valid request of a write route acts on: made for that request
// through the services and the store, not through the routes under test.
type auditFixture struct {
	app, key, testNumber, webhook, event string
	entry                                int64
	block, operator, token               string
	identity, factor, code               string
	// budget and priceRow name the fixture's spend budget and price (a row's channel,
	// country, prefix and provider).
	budget, priceRow string
}

// writeRequest is one valid request of a write route, as an admin makes it: a form for the
// console's posts, JSON for the API.
type writeRequest struct {
	path string
	form url.Values
	json string
}

// validWrites holds a valid request of every write route, by "METHOD pattern". A write
// route added to the table without one here fails TestEveryWriteRouteIsAudited, which
// then asks for its request and its audit entry.
var validWrites = map[string]func(f auditFixture) writeRequest{
	"POST /admin/limits/reset": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/limits/reset", form: url.Values{"phone": {"+819012345678"}}}
	},
	"DELETE /admin/api/limits": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/limits?ip=192.0.2.77"}
	},

	"POST /admin/apps": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps", form: url.Values{"name": {"Audited"}}}
	},
	"POST /admin/apps/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app, form: url.Values{"name": {"Renamed"}}}
	},
	"POST /admin/apps/{id}/delete": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/delete", form: url.Values{}}
	},
	"POST /admin/api/apps": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps", json: `{"name":"Audited"}`}
	},
	"PATCH /admin/api/apps/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app, json: `{"name":"Renamed"}`}
	},
	"DELETE /admin/api/apps/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app}
	},
	"POST /admin/apps/{id}/keys": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/keys", form: url.Values{"name": {"ci"}}}
	},
	"POST /admin/apps/{id}/keys/{key_id}/revoke": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/keys/" + f.key + "/revoke", form: url.Values{}}
	},
	"POST /admin/api/apps/{id}/keys": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/keys", json: `{"name":"ci"}`}
	},
	"DELETE /admin/api/apps/{id}/keys/{key_id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/keys/" + f.key}
	},
	"POST /admin/apps/{id}/test-numbers": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/test-numbers", form: url.Values{
			"address": {"+819011112222"}, "code": {"424242"}, "expires": {time.Now().AddDate(0, 1, 0).Format(testExpiryLayout)}}}
	},
	"POST /admin/apps/{id}/test-numbers/{tid}/remove": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/test-numbers/" + f.testNumber + "/remove", form: url.Values{}}
	},
	"POST /admin/api/apps/{id}/test-numbers": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/test-numbers",
			json: fmt.Sprintf(`{"address":"+819011112222","code":"424242","expires_at":%q}`, time.Now().AddDate(0, 1, 0).UTC().Format(time.RFC3339))}
	},
	"DELETE /admin/api/apps/{id}/test-numbers/{tid}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/test-numbers/" + f.testNumber}
	},

	"POST /admin/apps/{id}/totp": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/totp", form: url.Values{"identity": {"enrolled-user-1"}, "friendly_name": {"phone"}}}
	},
	"POST /admin/apps/{id}/totp/verify": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/totp/verify", form: url.Values{"identity": {f.identity}, "factor": {f.factor}, "code": {f.code}}}
	},

	"POST /admin/apps/{id}/webhooks": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/webhooks", form: url.Values{
			"url": {"http://127.0.0.1:9/hook"}, "secret": {"whsec-of-the-audit-test-0123456789"}, "event_types": {events.VerificationApproved}}}
	},
	"POST /admin/apps/{id}/webhooks/{wid}/test": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/webhooks/" + f.webhook + "/test", form: url.Values{}}
	},
	"POST /admin/apps/{id}/webhooks/{wid}/delete": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/webhooks/" + f.webhook + "/delete", form: url.Values{}}
	},
	"POST /admin/api/apps/{id}/webhooks": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/webhooks",
			json: `{"url":"http://127.0.0.1:9/hook","secret":"whsec-of-the-audit-test-0123456789","event_types":["verification.approved"]}`}
	},
	"DELETE /admin/api/apps/{id}/webhooks/{wid}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/webhooks/" + f.webhook}
	},
	"POST /admin/api/apps/{id}/webhooks/{wid}/test": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/webhooks/" + f.webhook + "/test"}
	},
	"POST /admin/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/apps/" + f.app + "/webhooks/" + f.webhook + "/deliveries/" + f.event + "/redeliver", form: url.Values{}}
	},
	"POST /admin/api/apps/{id}/webhooks/{wid}/deliveries/{eid}/redeliver": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/apps/" + f.app + "/webhooks/" + f.webhook + "/deliveries/" + f.event + "/redeliver"}
	},

	"POST /admin/operators": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/operators", form: url.Values{"email": {uuid.NewString() + "@example.com"}, "role": {"viewer"}}}
	},
	"POST /admin/operators/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/operators/" + f.operator, form: url.Values{"role": {"operator"}}}
	},
	"POST /admin/operators/{id}/tokens": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/operators/" + f.operator + "/tokens", form: url.Values{"name": {"ci"}}}
	},
	"POST /admin/operators/{id}/tokens/{token_id}/revoke": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/operators/" + f.operator + "/tokens/" + f.token + "/revoke", form: url.Values{}}
	},
	"POST /admin/api/operators": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/operators", json: fmt.Sprintf(`{"email":"%s@example.com","role":"viewer"}`, uuid.NewString())}
	},
	"PATCH /admin/api/operators/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/operators/" + f.operator, json: `{"role":"operator"}`}
	},
	"POST /admin/api/operators/{id}/tokens": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/operators/" + f.operator + "/tokens", json: `{"name":"ci"}`}
	},
	"DELETE /admin/api/operators/{id}/tokens/{token_id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/operators/" + f.operator + "/tokens/" + f.token}
	},

	"POST /admin/spend/currency": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/currency", form: url.Values{"currency": {"EUR"}}}
	},
	"POST /admin/spend/prices": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/prices", form: url.Values{"channel": {"voice"}, "country": {"JP"}, "prefix": {fmt.Sprintf("+8190%d", fixtureSeq.Add(1)%1000)}, "price": {"0.12"}}}
	},
	"POST /admin/spend/prices/change": func(f auditFixture) writeRequest {
		_, rest, _ := strings.Cut(f.priceRow, "|GB|")
		prefix, _, _ := strings.Cut(rest, "|")
		return writeRequest{path: "/admin/spend/prices/change", form: url.Values{"row": {f.priceRow}, "channel": {"sms"}, "country": {"GB"}, "prefix": {prefix}, "price": {"0.9"}}}
	},
	"POST /admin/spend/prices/remove": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/prices/remove", form: url.Values{"row": {f.priceRow}}}
	},
	"POST /admin/spend/budgets": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/budgets", form: url.Values{"name": {"added-" + uuid.NewString()[:8]}, "daily": {"3"}, "mode": {"shadow"}}}
	},
	"POST /admin/spend/budgets/{name}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/budgets/" + f.budget, form: url.Values{"name": {f.budget}, "daily": {"4"}, "mode": {"alert"}}}
	},
	"POST /admin/spend/budgets/{name}/remove": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/spend/budgets/" + f.budget + "/remove", form: url.Values{}}
	},
	"DELETE /admin/api/subjects/{subject}": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/subjects/%2B819055556666"}
	},
	"PUT /admin/api/spend/config": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/spend/config", json: `{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":0.05}],"budgets":[]}`}
	},

	"POST /admin/fraud/config": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/fraud/config", form: url.Values{"fraud_ratio": {"0.3"}}}
	},
	"PUT /admin/api/fraud/config": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/fraud/config", json: `{"fraud_ratio":0.35}`}
	},
	"POST /admin/fraud/lists": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/fraud/lists", form: url.Values{"list": {"block"}, "value": {"+819077788899"}}}
	},
	"POST /admin/fraud/lists/{id}/delete": func(f auditFixture) writeRequest {
		return writeRequest{path: fmt.Sprintf("/admin/fraud/lists/%d/delete", f.entry), form: url.Values{}}
	},
	"POST /admin/api/fraud/lists": func(auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/fraud/lists", json: `{"list":"block","value":"+819066655544"}`}
	},
	"DELETE /admin/api/fraud/lists/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: fmt.Sprintf("/admin/api/fraud/lists/%d", f.entry)}
	},
	"POST /admin/fraud/blocks/{id}/lift": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/fraud/blocks/" + f.block + "/lift", form: url.Values{}}
	},
	"DELETE /admin/api/fraud/blocks/{id}": func(f auditFixture) writeRequest {
		return writeRequest{path: "/admin/api/fraud/blocks/" + f.block}
	},
}

// writeRoutes walks the route table for the write routes: every POST, PUT, PATCH and
// DELETE, the console's form posts and the API's, but the catch-all of the profiles
// (which reads).
func writeRoutes(t *testing.T, h http.Handler) []string {
	t.Helper()
	var out []string
	err := chi.Walk(h.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		switch {
		case method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions || method == http.MethodConnect || method == http.MethodTrace:
		case strings.HasPrefix(pattern, "/debug/pprof/"):
		default:
			out = append(out, method+" "+pattern)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryWriteRouteIsAudited makes a valid request of every write route the route table
// has, as an admin with a personal token, on each store, and checks that it left a new
// audit entry with the admin as its actor and what changed (a before or an after) — and
// that no entry holds the phone number in clear or the secrets the requests carried.
func TestEveryWriteRouteIsAudited(t *testing.T) {
	t.Run("InMemory", func(t *testing.T) { everyWriteRouteIsAudited(t, inmem.New()) })
	t.Run("Postgres", func(t *testing.T) {
		ctx := context.Background()
		pool, err := postgres.Open(ctx, testenv.PostgresDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if err := postgres.Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
		everyWriteRouteIsAudited(t, postgres.New(pool, testenv.DataKeys()))
	})
}

func everyWriteRouteIsAudited(t *testing.T, store featureStore) {
	e := newFullEnvOn(t, store)
	routes := writeRoutes(t, NewServer(e.deps))
	if len(routes) < 40 {
		t.Fatalf("walked %d write routes; want every one the table has", len(routes))
	}
	admin := e.tokens[operators.RoleAdmin]
	for _, route := range routes {
		t.Run(strings.NewReplacer("/", "_", " ", "_", "{", "", "}", "").Replace(route), func(t *testing.T) {
			if _, ok := unauditedWrites[route]; ok {
				return
			}
			valid, ok := validWrites[route]
			if !ok {
				t.Fatalf("%s has no valid request in validWrites: add one, and make the route audit its change", route)
			}
			req := valid(e.auditFixture(t))
			last := e.lastAuditID(t)
			method, _, _ := strings.Cut(route, " ")
			h := map[string]string{}
			switch {
			case req.form != nil:
				h["body"], h["Content-Type"] = req.form.Encode(), "application/x-www-form-urlencoded"
			case req.json != "":
				h["body"], h["Content-Type"] = req.json, "application/json"
			}
			w := e.call(t, method, req.path, bearer(admin), h)
			if w.Code >= 400 {
				t.Fatalf("got %d %s; want the change made", w.Code, w.Body)
			}
			var found []history.AdminAction
			for _, a := range e.auditSince(t, last) {
				if a.ActorKind == history.ActorToken && a.ActorID == e.ids[operators.RoleAdmin] {
					found = append(found, a)
				}
			}
			if len(found) == 0 {
				t.Fatalf("no new audit entry by the admin's token")
			}
			for _, a := range found {
				if a.Before == "" && a.After == "" {
					t.Errorf("entry %s of %s: neither before nor after", a.Action, a.Target)
				}
				if a.ClientIP == "" || a.TokenID == "" || a.Time.IsZero() {
					t.Errorf("entry %s: got %+v, want when, from where and with which token", a.Action, a)
				}
				for _, v := range []string{a.Before, a.After} {
					if v != "" && !json.Valid([]byte(v)) && !describedInText(a.Action) {
						t.Errorf("entry %s: %q is not JSON", a.Action, v)
					}
				}
				text := a.Target + a.Detail + a.Before + a.After
				for _, secret := range []string{"9012345678", "9011112222", "9077788899", "9066655544", "whsec-of-the-audit-test", "424242"} {
					if strings.Contains(text, secret) {
						t.Errorf("entry %s holds %q in clear: %+v", a.Action, secret, a)
					}
				}
			}
		})
	}
}

// describedInText reports whether the action's Before and After are the sentences the
// apps and operators services wrote before the log took JSON; every other action's are JSON.
func describedInText(action string) bool {
	for _, p := range []string{"app_", "key_", "operator_"} {
		if strings.HasPrefix(action, p) {
			return true
		}
	}
	return false
}

// fixtureSeq makes the fixture's values unique within a store.
var fixtureSeq atomic.Int64

// auditFixture makes an app with a key, a test number, a TOTP factor and a webhook with
// one event delivery, a fraud list entry and a block, and an operator with a token.
func (e *fullEnv) auditFixture(t *testing.T) auditFixture {
	t.Helper()
	ctx := t.Context()
	n := fixtureSeq.Add(1)
	var f auditFixture
	name := fmt.Sprintf("Fixture %d", n)
	info, err := e.deps.Apps.CreateApp(ctx, apps.Patch{Name: &name}, "test")
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	f.app = info.App.ID
	key, err := e.deps.Apps.CreateKey(ctx, f.app, apps.NewKey{Name: "k"}, "test")
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	f.key = key.Key.ID
	tn, err := e.deps.Apps.AddTestNumber(ctx, f.app, apps.NewTestNumber{Address: "+819033334444", Code: "135790", ExpiresAt: time.Now().AddDate(0, 1, 0)}, "test")
	if err != nil {
		t.Fatalf("AddTestNumber: %v", err)
	}
	f.testNumber = tn.ID
	f.identity = fmt.Sprintf("user-%06d", n)
	en, err := e.deps.TOTP.CreateFactor(ctx, info.App, totp.NewFactor{Identity: f.identity, FriendlyName: "phone", Config: totp.DefaultConfig()})
	if err != nil {
		t.Fatalf("CreateFactor: %v", err)
	}
	f.factor, f.code = en.Factor.ID, pqCode(t, en.URI, time.Now())

	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	ep, _, err := e.deps.Webhooks.AddWebhook(ctx, f.app, events.EndpointInput{URL: hook.URL, Secret: "whsec-of-the-fixture-0123456789", Types: []string{events.VerificationCreated}}, "test")
	if err != nil {
		t.Fatalf("AddWebhook: %v", err)
	}
	f.webhook = ep.ID
	now := time.Now().UTC()
	if _, err := e.features.BeginSend(ctx, otp.BeginSend{
		AppID: f.app, Phone: "+819055556666", Channel: "sms", Locale: "en", ClientIP: "192.0.2.5", Provider: "webhook", Now: now,
		TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(),
		CodeHash: func(string) []byte { return []byte("hash") },
	}); err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	ds, err := e.deps.Webhooks.Deliveries(ctx, f.app, f.webhook, events.DeliveryFilter{})
	if err != nil || len(ds) == 0 {
		t.Fatalf("Deliveries: %v, %d; want the verification.created of the send", err, len(ds))
	}
	f.event = ds[0].Event.ID

	entry, err := fraud.NewListEntry("block", "", fmt.Sprintf("+81%d", 8000000+n), "")
	if err != nil {
		t.Fatal(err)
	}
	if entry, err = e.deps.Fraud.AddListEntry(ctx, entry, "test"); err != nil {
		t.Fatalf("AddListEntry: %v", err)
	}
	f.entry = entry.ID
	f.block = uuid.NewString()
	b := fraud.Block{ID: f.block, Scope: rate.ScopePrefix, Target: fmt.Sprintf("+81%d", 7000000+n), Mode: fraud.ModeEnforce, Reason: "test",
		StartedAt: now, EndsAt: now.Add(time.Hour)}
	if err := e.features.RecordFraudBlock(ctx, b, history.AdminAction{Action: fraud.ActionBlockStarted}); err != nil {
		t.Fatalf("RecordFraudBlock: %v", err)
	}

	o, err := e.ops.CreateOperator(ctx, operators.NewOperator{Email: fmt.Sprintf("fixture-%d-%s@example.com", n, uuid.NewString()[:8]), Role: "viewer"}, "test")
	if err != nil {
		t.Fatalf("CreateOperator: %v", err)
	}
	f.operator = o.ID
	tok, err := e.ops.CreateToken(ctx, o.ID, operators.NewToken{Name: "t"}, "test")
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	f.token = tok.Token.ID

	f.budget = fmt.Sprintf("fixture-%d", n)
	prefix := fmt.Sprintf("+447%d", 100+n)
	f.priceRow = "sms|GB|" + prefix + "|"
	if _, _, err := e.deps.Spend.EditConfig(ctx, func(c spend.Config) (spend.Config, error) {
		c.Prices = append(c.Prices, spend.PriceText{Channel: "sms", Country: "GB", Prefix: prefix, Price: "0.5"})
		c.Budgets = append(c.Budgets, spend.Budget{Name: f.budget, Daily: "2", Mode: "enforce"})
		return c, nil
	}, "test"); err != nil {
		t.Fatalf("EditConfig: %v", err)
	}
	return f
}

// lastAuditID is the id of the newest audit entry, 0 for none.
func (e *fullEnv) lastAuditID(t *testing.T) int64 {
	t.Helper()
	got, err := e.features.AuditLog(t.Context(), history.AuditFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		return 0
	}
	return got[0].ID
}

// auditSince returns the entries written after the one with id last.
func (e *fullEnv) auditSince(t *testing.T, last int64) []history.AdminAction {
	t.Helper()
	got, err := e.features.AuditLog(t.Context(), history.AuditFilter{Limit: history.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []history.AdminAction
	for _, a := range got {
		if a.ID > last {
			out = append(out, a)
		}
	}
	return out
}
