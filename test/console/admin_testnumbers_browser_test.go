package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestTestNumbersConsoleInBrowser adds a test number on an app's page in headless Chromium
// (a bad code first, refused next to the form), uses it, sees the send marked test in the
// history, removes it, and lets the app send to premium-rate numbers in its settings.
func TestTestNumbersConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_TRUSTED_PROXIES": "127.0.0.1/32"})
	in := servertest.Start(t, env)
	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)
	app := servertest.CreateApp(t, in, map[string]any{"name": "Store review"})
	number := servertest.PrefixPhone(servertest.NewPrefix(), 3)

	t.Run("ABadCodeIsRefusedNextToTheForm", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/apps/"+app),
			chromedp.WaitVisible(css(`#add-test-number`)),
			chromedp.SetValue(css(`#test-number-address`), number),
			chromedp.SetValue(css(`#test-number-code`), "12"),
			chromedp.Click(css(`#add-test-number-button`)),
			chromedp.WaitVisible(css(`.alert.error`)),
		)
		problem := browser.Read(t, ctx, chromedp.Text(css(`.alert.error`)))
		if !strings.Contains(problem, "code") {
			t.Errorf("got %q, want the code named", problem)
		}
		if kept := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelector('#test-number-address').value`)); kept != number {
			t.Errorf("address field: got %q, want what was typed", kept)
		}
		if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.test-numbers').length`)); n != 0 {
			t.Errorf("got a list of test numbers after a refusal, want none stored")
		}
	})

	t.Run("AddUseAndRemove", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#test-number-code`), "424242"),
			chromedp.SetValue(css(`#test-number-expires`), time.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02")),
			chromedp.Click(css(`#add-test-number-button`)),
			chromedp.WaitVisible(css(`table.test-numbers`)),
		)
		list := browser.Read(t, ctx, chromedp.Text(css(`table.test-numbers`)))
		saveArtifact(t, dir, "admin-app-test-numbers.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		if !strings.Contains(list, number) || !strings.Contains(list, "••••42") || !strings.Contains(list, "active") || strings.Contains(list, "424242") {
			t.Errorf("test numbers: got %q, want the number active with its code masked", list)
		}
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": number}, servertest.From("10.70.0.1")...), http.StatusCreated, "")
		if got := p.Received(number); len(got) != 0 {
			t.Errorf("got %d messages to a test number, want none", len(got))
		}
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/?phone="+url.QueryEscape(number)),
			chromedp.WaitVisible(css(`table.rows`)),
		)
		if rows := browser.Read(t, ctx, chromedp.Text(css(`table.rows`))); !strings.Contains(rows, "test number") {
			t.Errorf("history: got %q, want the send marked test number", rows)
		}
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/apps/"+app),
			chromedp.WaitVisible(css(`button.remove-test-number`)),
			chromedp.Click(css(`button.remove-test-number`)),
			chromedp.WaitNotPresent(css(`table.test-numbers`)),
		)
	})

	t.Run("TheAppSendsToPremiumRateNumbersWhenItsSettingsSaySo", func(t *testing.T) {
		premium := phonenumbers.Format(phonenumbers.GetExampleNumberForType("GB", phonenumbers.PREMIUM_RATE), phonenumbers.E164)
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": premium}, servertest.From("10.70.1.1")...),
			http.StatusUnprocessableEntity, "number_type_not_allowed")
		if v := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelector('#denied-number-types').value`)); v != "default" {
			t.Errorf("number types field: got %q, want default", v)
		}
		browser.Do(t, ctx, chromedp.SetValue(css(`#denied-number-types`), "none"))
		submit(t, ctx, `#save-app`)
		browser.Do(t, ctx, chromedp.WaitVisible(css(`#add-test-number`)))
		if v := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelector('#denied-number-types').value`)); v != "none" {
			t.Errorf("number types field after saving: got %q, want none", v)
		}
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": premium}, servertest.From("10.70.2.1")...), http.StatusCreated, "")
		servertest.WantStatus(t, servertest.Send(t, in, premium, servertest.From("10.70.3.1")...), http.StatusUnprocessableEntity, "number_type_not_allowed")
	})
}
