package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/outbound"
	"otpgate/internal/rate"
	"otpgate/internal/ratelimit"
	"otpgate/internal/spend"
	"otpgate/internal/testenv"
	"otpgate/internal/totp"
)

// featureStore is a store of every feature the admin listener serves and of their audit
// log: internal/inmem's or internal/postgres's.
type featureStore interface {
	history.Store
	otp.Store
	apps.Store
	events.Store
	fraud.Store
	spend.Store
	operators.Store
	totp.Store
	history.EraseStore
}

// fullEnv is the admin listener with every feature it can serve, over one store (in
// memory unless newFullEnvOn is given another), and one personal token per role.
type fullEnv struct {
	*adminEnv
	deps Deps
	// features is the store of apps, webhooks, fraud and operators, and of their audit.
	features featureStore
	ops      *operators.Admin
	tokens   map[operators.Role]string
	ids      map[operators.Role]string
}

func newFullEnv(t *testing.T) *fullEnv {
	t.Helper()
	return newFullEnvOn(t, inmem.New())
}

// newFullEnvOn is newFullEnv over store. Webhook endpoints may be on the loopback
// addresses, where the tests' receivers listen.
func newFullEnvOn(t *testing.T, store featureStore) *fullEnv {
	t.Helper()
	registry := apps.NewRegistry(store, otp.Config{CodeLength: 6, CodeTTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5}.DefaultApp(), discardLogger())
	codes, err := apps.NewCodeSealer([]byte("test secret of the test numbers"))
	if err != nil {
		t.Fatal(err)
	}
	registry.Sealer = codes
	if err := registry.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	appAdmin := apps.NewAdmin(store, registry)
	sealer, err := events.NewSealer([]byte("test secret of the role tests"))
	if err != nil {
		t.Fatal(err)
	}
	totpSealer, err := totp.NewSealer([]byte("test secret of the TOTP factors"))
	if err != nil {
		t.Fatal(err)
	}
	reloader := fraud.NewReloader(store, nil, fraud.Defaults(), discardLogger())
	if err := reloader.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	spendReloader := spend.NewReloader(store, nil, spend.DefaultConfig(), discardLogger())
	if err := spendReloader.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	f := &fullEnv{features: store, ops: operators.NewAdmin(store), tokens: map[operators.Role]string{}, ids: map[operators.Role]string{}}
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	f.adminEnv = newAdminEnv(t, func(d *Deps) {
		// One store for everything, as in production: the audit log is history's.
		limiter := ratelimit.New(rdb, testenv.KeyPrefix(t))
		d.Admin = history.NewAdmin(store, limiter, testRules())
		d.Erasure = history.NewEraser(store, limiter, func(a string) string { return "masked-" + strconv.Itoa(len(a)) },
			func(a string) []rate.Limit { return []rate.Limit{{Scope: otp.ScopePhone, Key: a}} })
		d.Apps, d.Webhooks, d.Operators = appAdmin, events.NewAdmin(store, appAdmin, sealer, events.Options{Outbound: outbound.New(outbound.Loopback())}), f.ops
		d.Fraud = fraud.NewAdmin(store, reloader, &liftRecorder{})
		d.Spend = spend.NewAdmin(store, spendReloader)
		d.TOTP = totp.NewService(store, ratelimit.New(rdb, testenv.KeyPrefix(t)+"totp:"), totpSealer, uuid.NewString)
		f.deps = *d
	})
	for _, role := range operators.Roles() {
		o, err := f.ops.CreateOperator(t.Context(), operators.NewOperator{Email: string(role) + "@example.com", Role: string(role)}, "test")
		if err != nil {
			t.Fatalf("CreateOperator: %v", err)
		}
		tok, err := f.ops.CreateToken(t.Context(), o.ID, operators.NewToken{Name: "test"}, "test")
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		f.tokens[role], f.ids[role] = tok.Secret, o.ID
	}
	return f
}

// wantRole is the least role each admin route needs, written down apart from the route
// table: viewers read (and sign out); operators also reset limits, lift blocks and redeliver events;
// admins do everything else, and only they read operators and the runtime profiles.
func wantRole(method, pattern string) operators.Role {
	switch {
	case strings.HasPrefix(pattern, "/debug/pprof/"),
		strings.HasPrefix(pattern, "/admin/operators"), strings.HasPrefix(pattern, "/admin/api/operators"):
		return operators.RoleAdmin
	case method == http.MethodGet, pattern == "/admin/logout":
		return operators.RoleViewer
	case pattern == "/admin/limits/reset" && method == http.MethodPost,
		pattern == "/admin/api/limits" && method == http.MethodDelete,
		pattern == "/admin/fraud/blocks/{id}/lift" && method == http.MethodPost,
		pattern == "/admin/api/fraud/blocks/{id}" && method == http.MethodDelete,
		strings.HasSuffix(pattern, "/redeliver") && method == http.MethodPost:
		return operators.RoleOperator
	}
	return operators.RoleAdmin
}

// publicRoutes answer without a credential.
var publicRoutes = []string{"/healthz", "/readyz", "/metrics", "/", "/admin", "/admin/static/*"}

// concrete fills a route pattern's parameters with values that name nothing.
func concrete(pattern string) string {
	r := strings.NewReplacer("{key_id}", "SK00000000000000000000000000000000", "{token_id}", "OT00000000000000000000000000000000",
		"{eid}", uuid.NewString(), "{wid}", uuid.NewString(), "{tid}", uuid.NewString(), "{id}", uuid.NewString(), "*", "cmdline")
	return r.Replace(pattern)
}

func TestEveryRouteNeedsItsRole(t *testing.T) {
	e := newFullEnv(t)
	type route struct{ method, pattern string }
	var routes []route
	err := chi.Walk(NewServer(e.deps).(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if slices.Contains(publicRoutes, pattern) {
			return nil
		}
		if strings.HasPrefix(pattern, "/debug/pprof/") && method != http.MethodGet {
			return nil // one method is enough for the catch-all of the profiles
		}
		routes = append(routes, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 60 {
		t.Fatalf("walked %d routes; want every admin route (apps, TOTP, webhooks, fraud, spend and operators included)", len(routes))
	}
	for _, rt := range routes {
		need := wantRole(rt.method, rt.pattern)
		for _, role := range operators.Roles() {
			w := e.call(t, rt.method, concrete(rt.pattern), bearer(e.tokens[role]), nil)
			switch forbidden := w.Code == http.StatusForbidden; {
			case !role.Allows(need) && (!forbidden || !refusedForRole(w.Body.String())):
				t.Errorf("%s %s as %s: got %d, want 403 forbidden (needs %s)", rt.method, rt.pattern, role, w.Code, need)
			case role.Allows(need) && (forbidden || w.Code == http.StatusUnauthorized):
				t.Errorf("%s %s as %s: got %d %s, want the call let through (needs %s)", rt.method, rt.pattern, role, w.Code, w.Body, need)
			}
		}
	}
}

func TestPersonalTokens(t *testing.T) {
	t.Run("ActsWithItsOperatorsRoleAsItIsNow", func(t *testing.T) {
		e := newFullEnv(t)
		tok := e.tokens[operators.RoleAdmin]
		if w := e.call(t, http.MethodGet, "/admin/api/operators", bearer(tok), nil); w.Code != http.StatusOK {
			t.Fatalf("as admin: got %d, want 200", w.Code)
		}
		// Another admin, since the last active admin cannot be demoted.
		if _, err := e.ops.CreateOperator(t.Context(), operators.NewOperator{Email: "second-admin@example.com", Role: "admin"}, "test"); err != nil {
			t.Fatal(err)
		}
		viewer := "viewer"
		if _, err := e.ops.UpdateOperator(t.Context(), e.ids[operators.RoleAdmin], operators.Patch{Role: &viewer}, "test"); err != nil {
			t.Fatal(err)
		}
		if w := e.call(t, http.MethodGet, "/admin/api/operators", bearer(tok), nil); w.Code != http.StatusForbidden {
			t.Errorf("after the demotion: got %d, want 403", w.Code)
		}
	})

	t.Run("DisabledRevokedExpiredAndWrongAreRefused", func(t *testing.T) {
		e := newFullEnv(t)
		disabled := true
		if _, err := e.ops.UpdateOperator(t.Context(), e.ids[operators.RoleViewer], operators.Patch{Disabled: &disabled}, "test"); err != nil {
			t.Fatal(err)
		}
		info, err := e.ops.GetOperator(t.Context(), e.ids[operators.RoleOperator])
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ops.RevokeToken(t.Context(), e.ids[operators.RoleOperator], info.Tokens[0].ID, "test"); err != nil {
			t.Fatal(err)
		}
		expiring, err := e.ops.CreateToken(t.Context(), e.ids[operators.RoleAdmin], operators.NewToken{ExpiresIn: time.Hour}, "test")
		if err != nil {
			t.Fatal(err)
		}
		e.ops.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		wrong := e.tokens[operators.RoleAdmin][:len(e.tokens[operators.RoleAdmin])-1] + "0"
		if wrong == e.tokens[operators.RoleAdmin] {
			wrong = wrong[:len(wrong)-1] + "1"
		}
		for name, tok := range map[string]string{
			"disabled": e.tokens[operators.RoleViewer], "revoked": e.tokens[operators.RoleOperator],
			"expired": expiring.Secret, "wrong": wrong,
		} {
			for _, auth := range []string{bearer(tok), basic("x", tok)} {
				if w := e.call(t, http.MethodGet, "/admin/api/stats", auth, nil); w.Code != http.StatusUnauthorized {
					t.Errorf("%s token: got %d, want 401", name, w.Code)
				}
			}
		}
		if w := e.call(t, http.MethodGet, "/admin/api/stats", bearer(e.tokens[operators.RoleAdmin]), nil); w.Code != http.StatusOK {
			t.Errorf("the live admin token: got %d, want 200", w.Code)
		}
	})

	t.Run("BreakGlassIsAnAuditedAdmin", func(t *testing.T) {
		e := newFullEnv(t)
		w := e.call(t, http.MethodGet, "/admin/api/me", bearer(testAdminToken), nil)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"kind":"break-glass"`) || !strings.Contains(w.Body.String(), `"role":"admin"`) {
			t.Fatalf("me: got %d %s, want break-glass admin", w.Code, w.Body)
		}
		h := map[string]string{"body": `{"email":"new@example.com","role":"viewer"}`, "Content-Type": "application/json"}
		if w := e.call(t, http.MethodPost, "/admin/api/operators", bearer(testAdminToken), h); w.Code != http.StatusCreated {
			t.Fatalf("create: got %d %s, want 201", w.Code, w.Body)
		}
		actions, err := e.features.AdminActions(t.Context(), 1)
		if err != nil || len(actions) != 1 || actions[0].Action != operators.ActionOperatorCreate || !strings.Contains(actions[0].Detail, "by break-glass api token") {
			t.Errorf("audit: got %+v, %v; want the creation by break-glass", actions, err)
		}
	})

	t.Run("TokenLifecycleOverTheAPI", func(t *testing.T) {
		e := newFullEnv(t)
		admin := bearer(e.tokens[operators.RoleAdmin])
		with := func(body string) map[string]string {
			return map[string]string{"body": body, "Content-Type": "application/json"}
		}
		w := e.call(t, http.MethodPost, "/admin/api/operators/"+e.ids[operators.RoleViewer]+"/tokens", admin, with(`{"name":"ci","expires_in_days":7}`))
		if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"secret":"otpgate_op_OT`) {
			t.Fatalf("create token: got %d %s, want 201 with the secret", w.Code, w.Body)
		}
		var created struct{ ID, Secret string }
		decodeInto(t, w, &created)
		if w := e.call(t, http.MethodGet, "/admin/api/me", bearer(created.Secret), nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"role":"viewer"`) {
			t.Fatalf("me with the new token: got %d %s, want the viewer", w.Code, w.Body)
		}
		if w := e.call(t, http.MethodGet, "/admin/api/operators/"+e.ids[operators.RoleViewer], admin, nil); strings.Contains(w.Body.String(), created.Secret) {
			t.Errorf("the operator's page shows the secret again: %s", w.Body)
		}
		if w := e.call(t, http.MethodDelete, "/admin/api/operators/"+e.ids[operators.RoleViewer]+"/tokens/"+created.ID, admin, nil); w.Code != http.StatusNoContent {
			t.Fatalf("revoke: got %d %s, want 204", w.Code, w.Body)
		}
		if w := e.call(t, http.MethodGet, "/admin/api/me", bearer(created.Secret), nil); w.Code != http.StatusUnauthorized {
			t.Errorf("revoked token: got %d, want 401", w.Code)
		}
		for body, field := range map[string]string{
			`{"expires_in_days":0}`:   "expires_in_days",
			`{"expires_in_days":400}`: "expires_in_days",
		} {
			w := e.call(t, http.MethodPost, "/admin/api/operators/"+e.ids[operators.RoleViewer]+"/tokens", admin, with(body))
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"`+field+`"`) {
				t.Errorf("%s: got %d %s, want 400 naming %s", body, w.Code, w.Body, field)
			}
		}
		for body, field := range map[string]string{
			`{"email":"not an address","role":"viewer"}`:    "email",
			`{"email":"x@example.com","role":"root"}`:       "role",
			`{"email":"viewer@example.com","role":"admin"}`: "email",
		} {
			w := e.call(t, http.MethodPost, "/admin/api/operators", admin, with(body))
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"`+field+`"`) {
				t.Errorf("%s: got %d %s, want 400 naming %s", body, w.Code, w.Body, field)
			}
		}
		if list, _ := e.ops.ListOperators(t.Context()); len(list) != 3 {
			t.Errorf("operators: got %d, want the 3 of the fixture, nothing added by refused calls", len(list))
		}
	})
}

// decodeInto decodes a JSON answer into v.
func decodeInto(t *testing.T, w interface{ Result() *http.Response }, v any) {
	t.Helper()
	if err := jsonDecode(w.Result().Body, v); err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// refusedForRole reports whether a 403's body is the refusal of a role, as problem+json
// or as the console's page, rather than a CSRF failure.
func refusedForRole(body string) bool {
	return strings.Contains(body, `"code":"forbidden"`) || strings.Contains(body, "Your role does not allow this")
}

func TestAuditRecordsWhoAndWhat(t *testing.T) {
	e := newFullEnv(t)
	with := func(body string) map[string]string {
		return map[string]string{"body": body, "Content-Type": "application/json"}
	}
	admin := bearer(e.tokens[operators.RoleAdmin])
	w := e.call(t, http.MethodPost, "/admin/api/apps", admin, with(`{"name":"Shop"}`))
	if w.Code != http.StatusCreated {
		t.Fatalf("create app: got %d %s", w.Code, w.Body)
	}
	var app struct{ ID string }
	decodeInto(t, w, &app)
	if w := e.call(t, http.MethodPatch, "/admin/api/apps/"+app.ID, bearer(testAdminToken), with(`{"name":"Shop 2"}`)); w.Code != http.StatusOK {
		t.Fatalf("update app: got %d %s", w.Code, w.Body)
	}

	var page auditResponse
	decodeInto(t, e.call(t, http.MethodGet, "/admin/api/audit?actor=admin%40example.com&action=app_create", bearer(e.tokens[operators.RoleViewer]), nil), &page)
	if len(page.Entries) != 1 {
		t.Fatalf("admin's creations: got %+v, want the one", page.Entries)
	}
	created := page.Entries[0]
	if created.ActorKind != "token" || created.ActorID != e.ids[operators.RoleAdmin] || !strings.HasPrefix(created.TokenID, "OT") ||
		created.ClientIP != "192.0.2.1" || created.Before != "" || !strings.Contains(created.After, `name "Shop"`) {
		t.Errorf("creation: got %+v, want the admin's token, address and the new app", created)
	}
	decodeInto(t, e.call(t, http.MethodGet, "/admin/api/audit?actor=break-glass", admin, nil), &page)
	if len(page.Entries) != 1 || page.Entries[0].Action != "app_update" || !strings.Contains(page.Entries[0].Before, `name "Shop"`) ||
		!strings.Contains(page.Entries[0].After, `name "Shop 2"`) {
		t.Errorf("break-glass changes: got %+v, want the update with before and after", page.Entries)
	}
	if w := e.call(t, http.MethodGet, "/admin/api/audit?from=yesterday", admin, nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"from"`) {
		t.Errorf("bad from: got %d %s, want 400 naming from", w.Code, w.Body)
	}
	w = e.call(t, http.MethodGet, "/admin/audit?action=app_update", basic("x", e.tokens[operators.RoleViewer]), nil)
	if body := w.Body.String(); w.Code != http.StatusOK || !strings.Contains(body, "break-glass") || !strings.Contains(body, "Shop 2") || strings.Contains(body, "app_create") {
		t.Errorf("audit page: got %d, want the update only, by break-glass", w.Code)
	}
}
