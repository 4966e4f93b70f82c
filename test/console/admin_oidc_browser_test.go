package console

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestOIDCSignInInBrowser signs in to the console in headless Chromium through an
// OpenID Connect provider running in the test (authorization code with PKCE): a person
// in the viewers' group is refused a change, one in the admins' group makes it. Accounts
// are created at the first sign-in with the role the groups map to.
func TestOIDCSignInInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatalf("identity provider: %v", err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	cfg := idp.Config()

	// The callback URL is configured before the server starts, so the admin listener
	// gets a port chosen here.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminAddr := ln.Addr().String()
	_ = ln.Close()

	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{
		"OTP_ADMIN_ADDR":         adminAddr,
		"OTP_ADMIN_PUBLIC_URL":   "http://" + adminAddr,
		"OTP_OIDC_ISSUER":        cfg.Issuer,
		"OTP_OIDC_CLIENT_ID":     cfg.ClientID,
		"OTP_OIDC_CLIENT_SECRET": cfg.ClientSecret,
		"OTP_OIDC_ROLES":         "otp-admins=admin,otp-viewers=viewer",
	})
	in := servertest.Start(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.Stderr)
		}
	})

	signIn := func(t *testing.T, subject, email, group string) context.Context {
		t.Helper()
		idp.QueueUser(&mockoidc.MockUser{Subject: subject, Email: email, EmailVerified: true, Groups: []string{group}})
		ctx := browser.New(t, chromium)
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/login"),
			chromedp.WaitVisible(css(`header.top nav`)),
		)
		if where := browser.Read(t, ctx, chromedp.Evaluate[string](`location.pathname`)); where != "/admin/" {
			t.Fatalf("after sign-in: at %s, want the history page /admin/\n%s", where, browser.PageState(ctx))
		}
		return ctx
	}
	createApp := func(t *testing.T, ctx context.Context, name string) string {
		t.Helper()
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/apps"),
			chromedp.WaitVisible(css(`#create-app`)),
			chromedp.SetValue(css(`input[name="name"]`), name),
		)
		// The apps page has an h1 of its own: wait for the answer's page to replace it.
		submit(t, ctx, `#create-app`)
		return browser.Read(t, ctx, chromedp.Evaluate[string](`document.body.innerText`))
	}

	t.Run("ViewerIsRefusedAChange", func(t *testing.T) {
		ctx := signIn(t, "viewer-1", "vera@example.com", "otp-viewers")
		if page := createApp(t, ctx, "Viewer's app"); !strings.Contains(page, "Your role does not allow this") {
			t.Errorf("a viewer's change: got page %q, want the refusal of the role", page)
		}
		if page := browser.Read(t, ctx, chromedp.Evaluate[string](`document.body.innerText`)); strings.Contains(page, "Viewer's app") {
			t.Errorf("the refused app shows up: %q", page)
		}
	})

	t.Run("AdminMakesTheChange", func(t *testing.T) {
		ctx := signIn(t, "admin-1", "ada@example.com", "otp-admins")
		createApp(t, ctx, "Admin's app")
		browser.Do(t, ctx, chromedp.WaitVisible(css(`#create-key`)))
		if facts := browser.Read(t, ctx, chromedp.Text(css(`dl.facts`))); !strings.Contains(facts, "key") && !strings.Contains(facts, "public") {
			t.Errorf("app page: got %q, want the new app's facts", facts)
		}
	})

	t.Run("AccountsWereCreatedWithTheMappedRoles", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, in.Admin+"/admin/api/operators", nil)
		req.Header.Set("Authorization", "Bearer "+env["ADMIN_TOKEN"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Operators []struct {
				Email, Role, Subject string
				RoleFromConsole      bool `json:"role_from_console"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET /admin/api/operators: got %d, %v", resp.StatusCode, err)
		}
		want := map[string]string{"ada@example.com": "admin", "vera@example.com": "viewer"}
		if len(got.Operators) != 2 {
			t.Fatalf("operators: got %+v, want the two who signed in", got.Operators)
		}
		for _, o := range got.Operators {
			if want[o.Email] != o.Role || o.RoleFromConsole || o.Subject == "" {
				t.Errorf("operator %+v: want role %s from the claims, with the subject recorded", o, want[o.Email])
			}
		}
	})
}
