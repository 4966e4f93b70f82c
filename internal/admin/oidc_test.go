package admin

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"otpgate/internal/history"
	"otpgate/internal/inmem"
	"otpgate/internal/operators"
	"otpgate/internal/sso"
)

// idpUser is a person at the test's identity provider. Its ID token carries the
// provider's registered claims (iss, sub, aud, exp, nonce) and exactly the claims the
// test gives, which replace them where they share a name: so a test can leave
// email_verified out, make it a string, or send an aud list.
type idpUser struct {
	subject string
	claims  map[string]any
}

func (u idpUser) ID() string { return u.subject }

func (u idpUser) Userinfo([]string) ([]byte, error) {
	return json.Marshal(map[string]string{"sub": u.subject})
}

func (u idpUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	b, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	m := jwt.MapClaims{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	maps.Copy(m, u.claims)
	return m, nil
}

// oidcEnv is the admin listener with single sign-on against an OpenID Connect provider
// running in the test, through the same sso.Client the server uses.
type oidcEnv struct {
	*adminEnv
	idp   *mockoidc.MockOIDC
	ops   *operators.Admin
	store *inmem.Store
}

func newOIDCEnv(t *testing.T, trustUnverified bool) *oidcEnv {
	t.Helper()
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatalf("identity provider: %v", err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	cfg := idp.Config()
	client, err := sso.New(sso.Config{
		Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		RedirectURL: "https://otp-admin.example.com/admin/oidc/callback", RoleClaim: "groups",
		TrustUnverifiedEmail: trustUnverified,
	})
	if err != nil {
		t.Fatal(err)
	}
	store := inmem.New()
	e := &oidcEnv{idp: idp, ops: operators.NewAdmin(store), store: store}
	e.adminEnv = newAdminEnv(t, func(d *Deps) {
		d.SignOn, d.Operators, d.SessionSecret = client, e.ops, []byte("session secret of the test")
		d.Roles = operators.RoleMap{Values: map[string]operators.Role{"otp-admins": operators.RoleAdmin, "otp-viewers": operators.RoleViewer}}
	})
	return e
}

// authorize sends the browser's trip to the provider, which signs the queued person in
// at once, and returns the callback URL the provider sends the browser back to.
func (e *oidcEnv) authorize(t *testing.T, to string) *url.URL {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(to)
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	_ = resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || back.Query().Get("code") == "" {
		t.Fatalf("authorize: got %d to %q, want 302 back with a code", resp.StatusCode, resp.Header.Get("Location"))
	}
	return back
}

// start begins a sign-in as u: it returns the login cookie and the provider's URL.
func (e *oidcEnv) start(t *testing.T, u idpUser) (*http.Cookie, string) {
	t.Helper()
	e.idp.QueueUser(u)
	w := e.call(t, http.MethodGet, "/admin/login", "", nil)
	if w.Code != http.StatusFound {
		t.Fatalf("login: got %d %s, want 302 to the provider", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == loginCookie {
			return c, w.Header().Get("Location")
		}
	}
	t.Fatalf("login: no login cookie")
	return nil, ""
}

// callback brings the provider's answer back to the console with the login cookie and
// returns the answer and the session cookie it set, if any.
func (e *oidcEnv) callback(login *http.Cookie, back *url.URL) (*httptest.ResponseRecorder, *http.Cookie) {
	r := httptest.NewRequest(http.MethodGet, "/admin/oidc/callback?"+back.RawQuery, nil)
	r.AddCookie(login)
	w := serve(e.h, r)
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			return w, c
		}
	}
	return w, nil
}

// signIn runs a whole sign-in as u.
func (e *oidcEnv) signIn(t *testing.T, u idpUser) (*httptest.ResponseRecorder, *http.Cookie) {
	t.Helper()
	login, to := e.start(t, u)
	return e.callback(login, e.authorize(t, to))
}

// as calls the listener with the session cookie.
func (e *oidcEnv) as(c *http.Cookie, method, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.AddCookie(c)
	return serve(e.h, r)
}

// TestOIDCEmailMustBeVerified is the takeover the third security round found: an
// identity that claims a pre-created admin's address, without the provider vouching
// for it, must sign in to nothing.
func TestOIDCEmailMustBeVerified(t *testing.T) {
	const cfo = "cfo-admin@example.com"
	intruder := func(verified ...any) idpUser {
		u := idpUser{subject: "intruder-1", claims: map[string]any{"email": cfo, "groups": []string{}}}
		if len(verified) > 0 {
			u.claims["email_verified"] = verified[0]
		}
		return u
	}
	newEnv := func(t *testing.T, trust bool) (*oidcEnv, operators.Operator) {
		e := newOIDCEnv(t, trust)
		o, err := e.ops.CreateOperator(t.Context(), operators.NewOperator{Email: cfo, Role: "admin"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return e, o
	}
	refused := func(t *testing.T, e *oidcEnv, u idpUser) {
		t.Helper()
		w, c := e.signIn(t, u)
		if w.Code != http.StatusForbidden || c != nil {
			t.Errorf("callback: got %d with session %v, want 403 and no session", w.Code, c)
		}
		if o, err := e.store.OperatorByEmail(t.Context(), cfo); err != nil || o.Subject != "" {
			t.Errorf("the admin's account: got %+v, %v; want it bound to nobody", o, err)
		}
		if list, _ := e.ops.ListOperators(t.Context()); len(list) != 1 {
			t.Errorf("operators: got %d, want the admin's account alone", len(list))
		}
	}

	for name, u := range map[string]idpUser{
		"NoClaim":           intruder(),
		"TheStringFalse":    intruder("false"),
		"TheStringTrue":     intruder("true"),
		"TheNumberOne":      intruder(1),
		"Null":              intruder(nil),
		"TheBooleanFalse":   intruder(false),
		"NoClaimNoAccount":  {subject: "intruder-2", claims: map[string]any{"email": "new@example.com", "groups": []string{"otp-admins"}}},
		"FalseNoAccountYet": {subject: "intruder-3", claims: map[string]any{"email": "new@example.com", "email_verified": "false", "groups": []string{"otp-admins"}}},
	} {
		t.Run("RefusedWith"+name, func(t *testing.T) {
			e, _ := newEnv(t, false)
			refused(t, e, u)
		})
	}

	t.Run("TrustingAProviderThatNeverSaysStillRefusesAFalseClaim", func(t *testing.T) {
		e, _ := newEnv(t, true)
		refused(t, e, intruder("false"))
		refused(t, e, intruder(false))
	})

	t.Run("TrustingAProviderThatNeverSaysBindsWithoutTheClaim", func(t *testing.T) {
		e, _ := newEnv(t, true)
		if w, c := e.signIn(t, intruder()); w.Code != http.StatusSeeOther || c == nil {
			t.Errorf("callback: got %d with session %v, want 303 with a session", w.Code, c)
		}
	})

	t.Run("AVerifiedAddressBindsAndTheAuditShowsTheSubject", func(t *testing.T) {
		e, o := newEnv(t, false)
		w, c := e.signIn(t, idpUser{subject: "cfo-1", claims: map[string]any{"email": cfo, "email_verified": true, "groups": []string{}}})
		if w.Code != http.StatusSeeOther || c == nil {
			t.Fatalf("callback: got %d %s, want 303 with a session", w.Code, w.Body)
		}
		if w := e.as(c, http.MethodGet, "/admin/api/me"); !strings.Contains(w.Body.String(), `"role":"admin"`) {
			t.Errorf("me: got %s, want the admin", w.Body)
		}
		acts, err := e.store.AdminActions(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var bound *history.AdminAction
		for i := range acts {
			if acts[i].Action == operators.ActionOperatorSignIn && acts[i].Target == "operator:"+o.ID {
				bound = &acts[i]
			}
		}
		if bound == nil || !strings.Contains(bound.Before, `subject ""`) || !strings.Contains(bound.After, `subject "cfo-1"`) {
			t.Errorf("binding's audit entry: got %+v, want subject \"\" before and \"cfo-1\" after", bound)
		}
	})
}

// TestOIDCLoginIsFinishedOnce replays a sign-in: the same login cookie and state, taken
// to the provider again for a fresh code, must not sign in a second time.
func TestOIDCLoginIsFinishedOnce(t *testing.T) {
	e := newOIDCEnv(t, false)
	ada := idpUser{subject: "ada-1", claims: map[string]any{"email": "ada@example.com", "email_verified": true, "groups": []string{"otp-admins"}}}
	login, to := e.start(t, ada)
	if w, c := e.callback(login, e.authorize(t, to)); w.Code != http.StatusSeeOther || c == nil {
		t.Fatalf("first callback: got %d %s, want 303 with a session", w.Code, w.Body)
	}
	e.idp.QueueUser(ada)
	if w, c := e.callback(login, e.authorize(t, to)); w.Code != http.StatusUnauthorized || c != nil {
		t.Errorf("replayed callback with a fresh code: got %d with session %v, want 401 and no session", w.Code, c)
	}
}

// TestOIDCAudienceList checks an ID token for several audiences as OpenID Connect Core
// says: it signs in only when it names this console as its authorized party (azp).
func TestOIDCAudienceList(t *testing.T) {
	for name, c := range map[string]struct {
		claims map[string]any
		ok     bool
	}{
		"ListWithoutParty":         {map[string]any{"aud": []string{"CLIENT", "other-app"}}, false},
		"ListWithAnotherParty":     {map[string]any{"aud": []string{"CLIENT", "other-app"}, "azp": "other-app"}, false},
		"OneAudienceAnotherParty":  {map[string]any{"aud": []string{"CLIENT"}, "azp": "other-app"}, false},
		"ListWithThisConsoleParty": {map[string]any{"aud": []string{"other-app", "CLIENT"}, "azp": "CLIENT"}, true},
		"OneAudience":              {map[string]any{}, true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newOIDCEnv(t, false)
			claims := map[string]any{"email": "ada@example.com", "email_verified": true, "groups": []string{"otp-admins"}}
			for k, v := range c.claims {
				if k == "aud" {
					aud := slices.Clone(v.([]string))
					for i := range aud {
						aud[i] = strings.ReplaceAll(aud[i], "CLIENT", e.idp.ClientID)
					}
					v = aud
				}
				if v == "CLIENT" {
					v = e.idp.ClientID
				}
				claims[k] = v
			}
			w, s := e.signIn(t, idpUser{subject: "ada-1", claims: claims})
			if got := w.Code == http.StatusSeeOther && s != nil; got != c.ok {
				t.Errorf("callback: got %d with session %v, want signed in %v", w.Code, s, c.ok)
			}
		})
	}
}
