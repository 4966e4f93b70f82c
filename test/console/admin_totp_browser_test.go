package console

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	pqotp "github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestTOTPConsoleInBrowser enrols a TOTP factor on an app's TOTP page in headless
// Chromium: a bad identity first (refused, naming it), then a good one, whose QR code the
// browser draws (the page's Content-Security-Policy lets a data: image load), and whose
// first code, made by pquerna/otp from the URI shown, verifies it.
func TestTOTPConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, nil)
	in := servertest.Start(t, env)
	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)
	app := servertest.CreateApp(t, in, map[string]any{"name": "Authenticator"})

	t.Run("ABadIdentityIsRefusedNextToTheForm", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/apps/"+app),
			chromedp.WaitVisible(css(`#totp-link`)),
			chromedp.Click(css(`#totp-link`)),
			chromedp.WaitVisible(css(`#enrol-totp`)),
			chromedp.SetValue(css(`#totp-identity`), "+14155550100"),
			chromedp.SetValue(css(`#totp-name`), "Work phone"),
			chromedp.Click(css(`#enrol-factor`)),
			chromedp.WaitVisible(css(`.alert.error`)),
		)
		if problem := browser.Read(t, ctx, chromedp.Text(css(`.alert.error`))); !strings.Contains(problem, "identity") {
			t.Errorf("got %q, want the identity named", problem)
		}
		if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#totp-qr, table.totp-factors').length`)); n != 0 {
			t.Errorf("a QR code or a factor after a refusal")
		}
	})

	t.Run("EnrolScanAndVerify", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#totp-identity`), "user-4242-abcd"),
			chromedp.SetValue(css(`#totp-name`), "Work phone"),
			chromedp.Click(css(`#enrol-factor`)),
			chromedp.WaitVisible(css(`#totp-qr`)),
		)
		saveArtifact(t, dir, "admin-totp-enrolment.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		// A blocked or broken image has no natural size: this one was drawn.
		if w := browser.Read(t, ctx, chromedp.Evaluate[int](`(() => { const i = document.querySelector('#totp-qr'); return i.complete ? i.naturalWidth : -1 })()`)); w != 256 {
			t.Errorf("QR image natural width %d, want 256 (the image did not load)", w)
		}
		uri := browser.Read(t, ctx, chromedp.Text(css(`#totp-uri`)))
		key, err := pqotp.NewKeyFromURL(uri)
		if err != nil {
			t.Fatalf("pquerna/otp reads %q: %v", uri, err)
		}
		code, err := pqtotp.GenerateCode(key.Secret(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		browser.Do(t, ctx, chromedp.SetValue(css(`#verify-code`), code))
		submit(t, ctx, `#verify-factor`)
		browser.Do(t, ctx, chromedp.WaitVisible(css(`table.totp-factors`)))
		if rows := browser.Read(t, ctx, chromedp.Text(css(`table.totp-factors`))); !strings.Contains(rows, "user-4242-abcd") || !strings.Contains(rows, "verified") || strings.Contains(rows, "unverified") {
			t.Errorf("factors: got %q, want user-4242-abcd's factor verified", rows)
		}
		if body := browser.Read(t, ctx, chromedp.Evaluate[string](`document.body.innerHTML`)); strings.Contains(body, key.Secret()) || strings.Contains(body, "totp-qr") {
			t.Errorf("the page after verification shows the secret or the QR code again")
		}
		for _, out := range []string{in.Stdout.String(), in.Stderr.String()} {
			if strings.Contains(out, key.Secret()) {
				t.Errorf("the server's output holds the secret")
			}
		}
	})
}
