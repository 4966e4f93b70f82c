package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestAdminSpendEditInBrowser edits the spend configuration on the console's Spend page in
// headless Chromium: a bad price is refused next to its field, then a price for a prefix and
// a daily budget for Japan are added through the forms (the budget's cap then changed in its
// row) and shown on the page, and the public API of the same server sends to that prefix
// until the budget refuses (429 budget_exceeded).
func TestAdminSpendEditInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_LIMIT_IP": "100/1h"})
	in := servertest.Start(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.Stderr)
		}
	})
	prefix := servertest.NewPrefix()
	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)
	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/spend"),
		chromedp.WaitVisible(css(`#add-price`)),
	)
	fillPrice := func(price string) {
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#add-price select[name="channel"]`), "sms"),
			chromedp.SetValue(css(`#add-price input[name="country"]`), "JP"),
			chromedp.SetValue(css(`#add-price input[name="prefix"]`), prefix),
			chromedp.SetValue(css(`#add-price input[name="price"]`), price),
		)
	}

	t.Run("ABadPriceIsRefusedNextToItsField", func(t *testing.T) {
		fillPrice("-0.05")
		submit(t, ctx, `#add-price-button`)
		got := browser.Read(t, ctx, chromedp.Text(css(`#add-price .field-problem`)))
		if !strings.Contains(got, "negative") {
			t.Errorf("problem next to the price: got %q, want it to say the price is negative", got)
		}
		if n := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('tr.price-row[data-row^="sms|JP|+"]').length`)); n != 0 {
			t.Errorf("got %d prices for the prefix after a refused form, want none", n)
		}
		saveArtifact(t, dir, "admin-spend-refused.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
	})

	t.Run("AddAPriceAndABudget", func(t *testing.T) {
		fillPrice("0.05")
		submit(t, ctx, `#add-price-button`)
		if got := browser.Read(t, ctx, chromedp.Text(css(`.alert.ok`))); !strings.Contains(got, "price was added") {
			t.Errorf("confirmation: got %q", got)
		}
		price := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelector('tr.price-row[data-row="sms|JP|`+prefix+`|"] input[name="price"]').value`))
		if price != "0.05" {
			t.Errorf("the new price's row shows %q, want 0.05", price)
		}
		browser.Do(t, ctx,
			chromedp.SetValue(css(`#add-budget input[name="name"]`), "jp-daily"),
			chromedp.SetValue(css(`#add-budget input[name="country"]`), "JP"),
			chromedp.SetValue(css(`#add-budget input[name="daily"]`), "0.05"),
			chromedp.SetValue(css(`#add-budget input[name="time_zone"]`), "Asia/Tokyo"),
			chromedp.SetValue(css(`#add-budget select[name="mode"]`), "enforce"),
		)
		submit(t, ctx, `#add-budget-button`)
		if got := browser.Read(t, ctx, chromedp.Text(css(`.alert.ok`))); !strings.Contains(got, "budget was added") {
			t.Errorf("confirmation: got %q", got)
		}
		// The row's own form changes the cap: its inputs belong to the form in its last cell.
		row := `tr.budget-setting[data-budget="jp-daily"] `
		browser.Do(t, ctx, chromedp.SetValue(css(row+`input[name="daily"]`), "0.10"))
		submit(t, ctx, row+`button.save-budget`)
		if got := browser.Read(t, ctx, chromedp.Text(css(`.alert.ok`))); !strings.Contains(got, "budget was saved") {
			t.Errorf("confirmation: got %q", got)
		}
		usage := browser.Read(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('tr.budget-jp-daily td')).map(c => c.textContent.trim()).join('|')`))
		if !strings.HasPrefix(usage, "jp-daily|JP|day|enforce|0.00|0.10|0%|") {
			t.Errorf("budget use: got %q, want jp-daily for JP unused", usage)
		}
		zone := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelector('tr.budget-setting[data-budget="jp-daily"] input[name="time_zone"]').value`))
		if zone != "Asia/Tokyo" {
			t.Errorf("budget setting's time zone: got %q", zone)
		}
		saveArtifact(t, dir, "admin-spend-edit.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
	})

	t.Run("SendsStopAtTheBudget", func(t *testing.T) {
		sent := 0
		for i := range 10 {
			r := servertest.Send(t, in, servertest.PrefixPhone(prefix, i))
			if r.Status == http.StatusTooManyRequests {
				servertest.WantStatus(t, r, http.StatusTooManyRequests, "budget_exceeded")
				break
			}
			servertest.WantStatus(t, r, http.StatusCreated, "")
			sent++
		}
		if sent != 2 {
			t.Errorf("%d sends at 0.05 went out before the 0.10 budget refused, want 2", sent)
		}
		browser.Do(t, ctx, chromedp.Navigate(in.Admin+"/admin/spend"), chromedp.WaitVisible(css(`tr.budget-jp-daily`)))
		if got := browser.Read(t, ctx, chromedp.Text(css(`tr.budget-jp-daily td.spent`))); got != "0.10" {
			t.Errorf("spent: got %q, want 0.10", got)
		}
	})
}
