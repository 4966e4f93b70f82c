package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestAdminFraudPageInBrowser drives the console's Fraud page in headless Chromium against a
// real server: see a prefix blocked by the guard and lift it, switch the guard to shadow in
// the rule editor and see the banner, add and remove a block-list entry, and see a bad value
// refused next to the form.
func TestAdminFraudPageInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_FLOOR_PREFIX": "3", "OTP_FRAUD_GUARD": "enforce"})
	in := servertest.Start(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.Stderr)
		}
	})
	prefix := servertest.NewPrefix()
	for i := range 3 {
		servertest.Send(t, in, servertest.PrefixPhone(prefix, i), servertest.From(fmt.Sprintf("10.7.%d.1", i))...)
	}
	servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, 3), servertest.From("10.7.3.1")...), http.StatusForbidden, "fraud_blocked")

	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)

	t.Run("ShowsTheBlockAndTheConversion", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/fraud"),
			chromedp.WaitVisible(css(`table.blocks`)),
		)
		blocks := browser.Read(t, ctx, chromedp.Text(css(`table.blocks`)))
		conversion := browser.Read(t, ctx, chromedp.Text(css(`table.conversion`)))
		saveArtifact(t, dir, "admin-fraud.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		if !strings.Contains(blocks, "prefix "+prefix) {
			t.Errorf("blocks: got %q, want the prefix %s", blocks, prefix)
		}
		if !strings.Contains(conversion, "JP") {
			t.Errorf("conversion: got %q, want JP's sends", conversion)
		}
		if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('.banner').length`)); n != 0 {
			t.Errorf("got %d banners while the guard enforces, want none", n)
		}
	})

	t.Run("LiftTheBlock", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Click(css(`button.lift-block`)),
			chromedp.WaitVisible(css(`.alert.ok`)),
		)
		if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.blocks tbody tr').length`)); n != 0 {
			t.Errorf("got %d blocks after the lift, want none", n)
		}
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(prefix, 4), servertest.From("10.7.4.1")...), http.StatusCreated, "")
	})

	t.Run("SwitchToShadowInTheRuleEditor", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#set-fraud_guard`), "shadow"),
			chromedp.Click(css(`#save-settings`)),
			chromedp.WaitVisible(css(`.banner`)),
		)
		banner := browser.Read(t, ctx, chromedp.Text(css(`.banner`)))
		if !strings.Contains(banner, "shadow") {
			t.Errorf("banner: got %q, want shadow mode", banner)
		}
		r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/config", "")
		if r.Str("fraud_guard") != "shadow" {
			t.Errorf("config after the form: got %s", r.Raw)
		}
		saveArtifact(t, dir, "admin-fraud-shadow.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
	})

	t.Run("ABadValueIsShownNextToTheForm", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#set-fraud_ratio`), "7"),
			chromedp.Click(css(`#save-settings`)),
			chromedp.WaitVisible(css(`.alert.error`)),
		)
		problem := browser.Read(t, ctx, chromedp.Text(css(`.alert.error`)))
		if !strings.Contains(problem, "fraud_ratio") {
			t.Errorf("got %q, want the ratio named", problem)
		}
	})

	t.Run("AddAndRemoveABlockListEntry", func(t *testing.T) {
		listed := servertest.NewPrefix()
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/fraud"),
			chromedp.WaitVisible(css(`#add-entry`)),
			chromedp.SetValue(css(`#add-entry input[name="value"]`), listed),
			chromedp.SetValue(css(`#add-entry input[name="note"]`), "premium range"),
			chromedp.Click(css(`#add-entry button[type="submit"]`)),
			chromedp.WaitVisible(css(`table.block-list`)),
		)
		list := browser.Read(t, ctx, chromedp.Text(css(`table.block-list`)))
		if !strings.Contains(list, listed) || !strings.Contains(list, "premium range") {
			t.Errorf("block list: got %q, want %s", list, listed)
		}
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(listed, 0), servertest.From("10.7.9.1")...), http.StatusForbidden, "blocked")
		browser.Do(t, ctx,
			chromedp.Click(css(`table.block-list button.remove-entry`)),
			chromedp.WaitNotPresent(css(`table.block-list`)),
		)
		servertest.WantStatus(t, servertest.Send(t, in, servertest.PrefixPhone(listed, 1), servertest.From("10.7.10.1")...), http.StatusCreated, "")
		actions := browser.Read(t, ctx, chromedp.Text(css(`table.actions`)))
		for _, want := range []string{"fraud_list_added", "fraud_list_removed", "fraud_block_lifted", "fraud_config_changed"} {
			if !strings.Contains(actions, want) {
				t.Errorf("actions: got %q, want %s", actions, want)
			}
		}
	})
}
