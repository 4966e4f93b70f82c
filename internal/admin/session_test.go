package admin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"otpgate/internal/inmem"
	"otpgate/internal/operators"
)

// fakeSignOn is an identity provider that vouches for whoever the test says, and checks
// that the callback brings back this sign-in's verifier and nonce.
type fakeSignOn struct {
	down     bool
	identity operators.Identity
	verifier string
	nonce    string
}

func (f *fakeSignOn) AuthCodeURL(_ context.Context, state, nonce, verifier string) (string, error) {
	if f.down {
		return "", errors.New("connection refused")
	}
	f.verifier, f.nonce = verifier, nonce
	return "https://idp.example.com/authorize?state=" + url.QueryEscape(state), nil
}

func (f *fakeSignOn) Exchange(_ context.Context, code, verifier, nonce string) (operators.Identity, error) {
	if code != "good-code" || verifier != f.verifier || nonce != f.nonce {
		return operators.Identity{}, errors.New("the code, verifier or nonce is not this sign-in's")
	}
	return f.identity, nil
}

// ssoEnv is the admin listener with single sign-on over a fake provider.
type ssoEnv struct {
	*adminEnv
	idp   *fakeSignOn
	ops   *operators.Admin
	store *inmem.Store
}

func newSSOEnv(t *testing.T) *ssoEnv {
	t.Helper()
	store := inmem.New()
	s := &ssoEnv{idp: &fakeSignOn{}, ops: operators.NewAdmin(store), store: store}
	s.adminEnv = newAdminEnv(t, func(d *Deps) {
		d.SignOn, d.Operators, d.SessionSecret = s.idp, s.ops, []byte("session secret of the test")
		d.Roles = operators.RoleMap{Values: map[string]operators.Role{"ops": operators.RoleOperator, "admins": operators.RoleAdmin}}
	})
	return s
}

// login runs a sign-in and returns the callback's answer and the session cookie it set.
func (s *ssoEnv) login(t *testing.T, id operators.Identity) (*httptest.ResponseRecorder, *http.Cookie) {
	t.Helper()
	s.idp.identity = id
	w := s.call(t, http.MethodGet, "/admin/login", "", nil)
	if w.Code != http.StatusFound {
		t.Fatalf("login: got %d, want 302 to the provider", w.Code)
	}
	to, _ := url.Parse(w.Header().Get("Location"))
	state := to.Query().Get("state")
	var login *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == loginCookie {
			login = c
		}
	}
	if login == nil || !login.HttpOnly || !login.Secure || login.SameSite != http.SameSiteLaxMode {
		t.Fatalf("login cookie: got %+v, want HttpOnly, Secure, SameSite=Lax", login)
	}
	r := httptest.NewRequest(http.MethodGet, "/admin/oidc/callback?code=good-code&state="+url.QueryEscape(state), nil)
	r.AddCookie(login)
	w = serve(s.h, r)
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			return w, c
		}
	}
	return w, nil
}

// as calls the listener with the session cookie.
func (s *ssoEnv) as(t *testing.T, c *http.Cookie, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.AddCookie(c)
	return serve(s.h, r)
}

func TestSingleSignOn(t *testing.T) {
	alice := operators.Identity{Subject: "sub-alice", Email: "Alice@Example.com", EmailVerified: true, Name: "Alice", Claims: []string{"ops"}}

	t.Run("FirstSignInCreatesTheAccountWithTheMappedRole", func(t *testing.T) {
		s := newSSOEnv(t)
		w, c := s.login(t, alice)
		if w.Code != http.StatusSeeOther || c == nil {
			t.Fatalf("callback: got %d, cookie %v; want 303 with a session", w.Code, c)
		}
		if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.MaxAge <= 0 {
			t.Errorf("session cookie: got %+v, want HttpOnly, Secure, SameSite=Lax, with an expiry", c)
		}
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"role":"operator"`) ||
			!strings.Contains(w.Body.String(), `"email":"alice@example.com"`) || !strings.Contains(w.Body.String(), `"kind":"session"`) {
			t.Errorf("me: got %d %s, want alice as an operator", w.Code, w.Body)
		}
	})

	t.Run("AChangeWithTheSessionNeedsTheCSRFToken", func(t *testing.T) {
		s := newSSOEnv(t)
		_, c := s.login(t, alice)
		if w := s.as(t, c, http.MethodDelete, "/admin/api/limits?phone=%2B819012345678"); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "csrf_failed") {
			t.Errorf("got %d %s, want 403 csrf_failed", w.Code, w.Body)
		}
	})

	t.Run("ARoleAssignedInTheConsoleWinsOverTheClaims", func(t *testing.T) {
		s := newSSOEnv(t)
		s.login(t, alice)
		o, err := s.store.OperatorBySubject(t.Context(), "sub-alice")
		if err != nil {
			t.Fatal(err)
		}
		viewer := "viewer"
		if _, err := s.ops.UpdateOperator(t.Context(), o.ID, operators.Patch{Role: &viewer}, "test"); err != nil {
			t.Fatal(err)
		}
		_, c := s.login(t, alice) // still claims "ops"
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); !strings.Contains(w.Body.String(), `"role":"viewer"`) {
			t.Errorf("me: got %s, want the viewer the console made her", w.Body)
		}
	})

	t.Run("ClaimsChangeTheRoleOfAnAccountTheyMade", func(t *testing.T) {
		s := newSSOEnv(t)
		s.login(t, alice)
		promoted := alice
		promoted.Claims = []string{"ops", "admins"}
		_, c := s.login(t, promoted)
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); !strings.Contains(w.Body.String(), `"role":"admin"`) {
			t.Errorf("me: got %s, want the admin the claims now grant", w.Body)
		}
	})

	t.Run("RefusedIdentities", func(t *testing.T) {
		s := newSSOEnv(t)
		if _, err := s.ops.CreateOperator(t.Context(), operators.NewOperator{Email: "bob@example.com", Role: "admin"}, "test"); err != nil {
			t.Fatal(err)
		}
		disabledID := func() string {
			s.login(t, operators.Identity{Subject: "sub-dan", Email: "dan@example.com", EmailVerified: true, Claims: []string{"ops"}})
			o, _ := s.store.OperatorBySubject(t.Context(), "sub-dan")
			d := true
			if _, err := s.ops.UpdateOperator(t.Context(), o.ID, operators.Patch{Disabled: &d}, "test"); err != nil {
				t.Fatal(err)
			}
			return o.ID
		}()
		_ = disabledID
		for name, id := range map[string]operators.Identity{
			"NoMappedRole":               {Subject: "sub-carol", Email: "carol@example.com", EmailVerified: true, Claims: []string{"staff"}},
			"UnverifiedEmailOfAnAccount": {Subject: "sub-mallory", Email: "bob@example.com", EmailVerified: false, Claims: []string{"admins"}},
			"Disabled":                   {Subject: "sub-dan", Email: "dan@example.com", EmailVerified: true, Claims: []string{"ops"}},
			"NoEmail":                    {Subject: "sub-eve", Claims: []string{"admins"}},
		} {
			w, c := s.login(t, id)
			if w.Code != http.StatusForbidden || c != nil {
				t.Errorf("%s: got %d with session %v, want 403 and no session", name, w.Code, c)
			}
		}
		if list, _ := s.ops.ListOperators(t.Context()); len(list) != 2 {
			t.Errorf("operators: got %d, want bob and dan only", len(list))
		}
	})

	t.Run("ACallbackThisBrowserDidNotStartIsRefused", func(t *testing.T) {
		s := newSSOEnv(t)
		s.idp.identity = alice
		w := s.call(t, http.MethodGet, "/admin/login", "", nil)
		var login *http.Cookie
		for _, c := range w.Result().Cookies() {
			login = c
		}
		for name, r := range map[string]*http.Request{
			"NoCookie":   httptest.NewRequest(http.MethodGet, "/admin/oidc/callback?code=good-code&state=x", nil),
			"OtherState": httptest.NewRequest(http.MethodGet, "/admin/oidc/callback?code=good-code&state=forged", nil),
		} {
			if name == "OtherState" {
				r.AddCookie(login)
			}
			if w := serve(s.h, r); w.Code != http.StatusUnauthorized || strings.Contains(w.Header().Get("Set-Cookie"), sessionCookie+"=e") {
				t.Errorf("%s: got %d, want 401 and no session", name, w.Code)
			}
		}
	})

	t.Run("AProviderThatIsDownLeavesBreakGlassWorking", func(t *testing.T) {
		s := newSSOEnv(t)
		s.idp.down = true
		if w := s.call(t, http.MethodGet, "/admin/login", "", nil); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "break-glass") {
			t.Errorf("login: got %d, want 503 pointing to the break-glass login", w.Code)
		}
		if w := s.call(t, http.MethodGet, "/admin/api/me", bearer(testAdminToken), nil); w.Code != http.StatusOK {
			t.Errorf("break-glass: got %d, want 200", w.Code)
		}
	})

	t.Run("ATamperedSessionIsNoSession", func(t *testing.T) {
		s := newSSOEnv(t)
		_, c := s.login(t, alice)
		c.Value = c.Value[:len(c.Value)-2] + "AA"
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); w.Code != http.StatusUnauthorized {
			t.Errorf("got %d, want 401", w.Code)
		}
	})
}

// formOf opens a console page with the session cookie (and the browser's CSRF nonce, if
// it has one) and returns the nonce cookie and the page's CSRF token.
func (s *ssoEnv) formOf(t *testing.T, sess, nonce *http.Cookie) (*http.Cookie, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/admin/limits", nil)
	r.AddCookie(sess)
	if nonce != nil {
		r.AddCookie(nonce)
	}
	w := serve(s.h, r)
	for _, c := range w.Result().Cookies() {
		if c.Name == csrfCookie {
			nonce = c
		}
	}
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || nonce == nil || m == nil {
		t.Fatalf("GET /admin/limits: got %d, nonce %v; want 200 with a CSRF nonce and token", w.Code, nonce)
	}
	return nonce, m[1]
}

// post sends a console form with the session, the CSRF nonce and token.
func (s *ssoEnv) post(sess, nonce *http.Cookie, target, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(url.Values{"ip": {"192.0.2.9"}, "csrf": {token}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(sess)
	r.AddCookie(nonce)
	return serve(s.h, r)
}

func TestConsoleSessionsAndForms(t *testing.T) {
	ada := operators.Identity{Subject: "sub-ada", Email: "ada@example.com", EmailVerified: true, Claims: []string{"admins"}}

	t.Run("SignOutEndsTheSessionOnTheServer", func(t *testing.T) {
		s := newSSOEnv(t)
		_, c := s.login(t, ada)
		nonce, token := s.formOf(t, c, nil)
		if w := s.post(c, nonce, "/admin/logout", token); w.Code != http.StatusOK {
			t.Fatalf("sign-out: got %d %s, want 200", w.Code, w.Body)
		}
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); w.Code != http.StatusUnauthorized {
			t.Errorf("the signed-out session's cookie, replayed: got %d, want 401", w.Code)
		}
		_, again := s.login(t, ada)
		if w := s.as(t, again, http.MethodGet, "/admin/api/me"); w.Code != http.StatusOK {
			t.Errorf("a new sign-in: got %d, want 200", w.Code)
		}
	})

	t.Run("ACSRFTokenIsBoundToItsPerson", func(t *testing.T) {
		s := newSSOEnv(t)
		if _, err := s.ops.CreateOperator(t.Context(), operators.NewOperator{Email: "vera@example.com", Role: "viewer"}, "test"); err != nil {
			t.Fatal(err)
		}
		_, vera := s.login(t, operators.Identity{Subject: "sub-vera", Email: "vera@example.com", EmailVerified: true})
		_, admin := s.login(t, ada)
		veraNonce, veraToken := s.formOf(t, vera, nil)
		if w := s.post(admin, veraNonce, "/admin/limits/reset", veraToken); w.Code != http.StatusForbidden {
			t.Errorf("the admin's form with the viewer's nonce and token: got %d %s, want 403 for CSRF", w.Code, w.Body)
		}
		nonce, token := s.formOf(t, admin, nil)
		if w := s.post(admin, nonce, "/admin/limits/reset", token); w.Code != http.StatusSeeOther {
			t.Errorf("the admin's form with her own nonce and token: got %d %s, want 303", w.Code, w.Body)
		}
	})
}

// TestRolesFollowTheProvider: an account single sign-on made follows the provider's
// claims, down to no access at all, and its personal tokens follow too.
func TestRolesFollowTheProvider(t *testing.T) {
	ada := operators.Identity{Subject: "sub-ada", Email: "ada@example.com", EmailVerified: true, Claims: []string{"admins"}}
	// tokenOf signs ada in and gives her a personal token.
	tokenOf := func(t *testing.T, s *ssoEnv) (*http.Cookie, string, operators.Operator) {
		t.Helper()
		_, c := s.login(t, ada)
		o, err := s.store.OperatorBySubject(t.Context(), ada.Subject)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.ops.CreateToken(t.Context(), o.ID, operators.NewToken{Name: "script"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		if w := s.call(t, http.MethodGet, "/admin/api/operators", bearer(tok.Secret), nil); w.Code != http.StatusOK {
			t.Fatalf("the admin's token: got %d, want 200", w.Code)
		}
		return c, tok.Secret, o
	}

	t.Run("LosingEveryMappedGroupDisablesTheAccountAndEndsItsAccess", func(t *testing.T) {
		s := newSSOEnv(t)
		c, secret, o := tokenOf(t, s)
		gone := ada
		gone.Claims = []string{"staff"}
		if w, sess := s.login(t, gone); w.Code != http.StatusForbidden || sess != nil {
			t.Errorf("sign-in without a mapped group: got %d with session %v, want 403 and none", w.Code, sess)
		}
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); w.Code != http.StatusUnauthorized {
			t.Errorf("the live session: got %d, want 401", w.Code)
		}
		if w := s.call(t, http.MethodPost, "/admin/api/operators", bearer(secret), map[string]string{"Content-Type": "application/json", "body": `{"email":"new@example.com","role":"admin"}`}); w.Code != http.StatusUnauthorized {
			t.Errorf("the personal token: got %d, want 401", w.Code)
		}
		got, _ := s.store.OperatorByID(t.Context(), o.ID)
		if !got.Disabled || got.Role != operators.RoleViewer {
			t.Errorf("account: got %+v, want disabled and lowered to viewer", got)
		}
		// An admin enabling it again gives back a viewer, and no old session.
		enabled := false
		if _, err := s.ops.UpdateOperator(t.Context(), o.ID, operators.Patch{Disabled: &enabled}, "test"); err != nil {
			t.Fatal(err)
		}
		if w := s.as(t, c, http.MethodGet, "/admin/api/me"); w.Code != http.StatusUnauthorized {
			t.Errorf("the old session after enabling: got %d, want 401", w.Code)
		}
	})

	t.Run("TokensOfAClaimsRoleNeedARecentSignIn", func(t *testing.T) {
		s := newSSOEnv(t)
		now := time.Now().UTC()
		s.ops.Now = func() time.Time { return now }
		s.ops.ClaimsRecheck = time.Hour
		_, secret, _ := tokenOf(t, s)
		now = now.Add(time.Hour)
		if w := s.call(t, http.MethodGet, "/admin/api/operators", bearer(secret), nil); w.Code != http.StatusUnauthorized {
			t.Errorf("a token an hour after the last sign-in: got %d, want 401", w.Code)
		}
		s.login(t, ada)
		if w := s.call(t, http.MethodGet, "/admin/api/operators", bearer(secret), nil); w.Code != http.StatusOK {
			t.Errorf("the token after a new sign-in: got %d, want 200", w.Code)
		}
	})

	t.Run("TokensOfAConsoleRoleDoNotExpireWithTheClaims", func(t *testing.T) {
		s := newSSOEnv(t)
		now := time.Now().UTC()
		s.ops.Now = func() time.Time { return now }
		s.ops.ClaimsRecheck = time.Hour
		o, err := s.ops.CreateOperator(t.Context(), operators.NewOperator{Email: "ops@example.com", Role: "admin"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.ops.CreateToken(t.Context(), o.ID, operators.NewToken{Name: "ci"}, "test")
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(48 * time.Hour)
		if w := s.call(t, http.MethodGet, "/admin/api/operators", bearer(tok.Secret), nil); w.Code != http.StatusOK {
			t.Errorf("a console account's token: got %d, want 200", w.Code)
		}
	})
}
