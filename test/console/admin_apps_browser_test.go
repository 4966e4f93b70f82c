package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestAppsConsoleInBrowser creates an app and a key in the console, uses the key, and
// finds the send in the history filtered by the app.
func TestAppsConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_LIMIT_IP": "off", "OTP_DUPLICATE_WINDOW": "0"})
	in := servertest.Start(t, env)
	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/apps"),
		chromedp.WaitVisible(css(`#create-app`)),
		chromedp.Click(css(`#create-app`)),
		chromedp.WaitVisible(css(`.alert.error`)),
	)
	if problems := browser.Read(t, ctx, chromedp.Text(css(`.alert.error`))); !strings.Contains(problems, "name") {
		t.Errorf("create without a name: got %q, want the name named", problems)
	}
	browser.Do(t, ctx,
		chromedp.SetValue(css(`input[name="name"]`), "Console shop"),
		chromedp.SetValue(css(`select[name="access"]`), "key"),
		chromedp.SetValue(css(`input[name="code_length"]`), "7"),
		chromedp.Click(css(`#create-app`)),
		chromedp.WaitVisible(css(`#create-key`)),
	)
	facts := browser.Read(t, ctx, chromedp.Text(css(`dl.facts`)))
	appID := strings.TrimPrefix(browser.Read(t, ctx, chromedp.Evaluate[string](`location.pathname`)), "/admin/apps/")
	if !strings.Contains(facts, appID) || !strings.Contains(facts, "key") {
		t.Fatalf("app page: got %q, want app %s with access key", facts, appID)
	}
	browser.Do(t, ctx,
		chromedp.SetValue(css(`#key-name`), "backend"),
		chromedp.Click(css(`#create-key`)),
		chromedp.WaitVisible(css(`p.secret`)),
	)
	secret := strings.TrimSpace(browser.Read(t, ctx, chromedp.Text(css(`p.secret`))))
	if keys := browser.Read(t, ctx, chromedp.Text(css(`table.keys`))); !strings.Contains(keys, "backend") {
		t.Errorf("keys: got %q, want the key named backend", keys)
	}
	saveArtifact(t, dir, "admin-app.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	phone := servertest.NewPhone()
	servertest.WantStatus(t, servertest.AppSend(t, in, appID, phone), http.StatusUnauthorized, "unauthorized")
	servertest.WantStatus(t, servertest.AppSend(t, in, appID, phone, "Authorization", "Bearer "+secret), http.StatusCreated, "")
	if code := servertest.LastCode(t, p, phone); len(code) != 7 {
		t.Errorf("got code %q, want the app's 7 digits", code)
	}
	servertest.WantStatus(t, servertest.Send(t, in, servertest.NewPhone()), http.StatusCreated, "") // a send of the default app

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/"),
		chromedp.WaitVisible(css(`select[name="app"]`)),
		chromedp.SetValue(css(`select[name="app"]`), appID),
		chromedp.Click(css(`form.filters button[type="submit"]`)),
		// The filtered page marks its app as selected; the page before it does not.
		chromedp.WaitReady(css(`select[name="app"] option[value="`+appID+`"][selected]`)),
		chromedp.WaitVisible(css(`table.rows`)),
	)
	phones := browser.Read(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('td.phone')).map(td => td.textContent)`))
	if len(phones) != 1 || phones[0] != phone {
		t.Errorf("history of the app: got %v, want only %s", phones, phone)
	}
	saveArtifact(t, dir, "admin-history-app.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/apps/"+appID),
		chromedp.WaitVisible(css(`button.revoke`)),
		chromedp.Click(css(`button.revoke`)),
		chromedp.WaitNotPresent(css(`button.revoke`)),
	)
	if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('button.revoke').length`)); n != 0 {
		t.Errorf("after revoking: got %d revoke buttons, want 0", n)
	}
	servertest.WantStatus(t, servertest.AppSend(t, in, appID, servertest.NewPhone(), "Authorization", "Bearer "+secret), http.StatusUnauthorized, "unauthorized")
}
