package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestAdminSpendPageInBrowser sets prices and a daily budget through the admin API, spends
// it to its cap (the next send is refused as budget_exceeded), and reads the budget's use
// and reset, the day's and the country's spend and the costliest prefix on the console's
// Spend page in headless Chromium.
func TestAdminSpendPageInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_LIMIT_IP": "100/1h"})
	in := servertest.Start(t, env)
	r := servertest.AdminCall(t, in, http.MethodPut, "/admin/api/spend/config",
		`{"currency":"EUR","prices":[{"channel":"sms","country":"*","price":"0.05"}],"budgets":[{"name":"daily-cap","daily":"0.10","mode":"enforce","fence":"off"}]}`)
	if r.Status != http.StatusOK {
		t.Fatalf("PUT spend config: got %d %s", r.Status, r.Raw)
	}
	for range 2 {
		servertest.WantStatus(t, servertest.Send(t, in, servertest.NewPhone()), http.StatusCreated, "")
	}
	servertest.WantStatus(t, servertest.Send(t, in, servertest.NewPhone()), http.StatusTooManyRequests, "budget_exceeded")

	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/"),
		chromedp.WaitVisible(css(`nav a[href="/admin/spend"]`)),
		chromedp.Click(css(`nav a[href="/admin/spend"]`)),
		chromedp.WaitVisible(css(`table.budgets`)),
	)
	saveArtifact(t, browser.ArtifactDir(t), "admin-spend.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
	budget := browser.Read(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('tr.budget-daily-cap td')).map(c => c.textContent.trim()).join('|')`))
	if !strings.HasPrefix(budget, "daily-cap|every send|day|enforce|0.10|0.10|100%|not shared out (fence off)|") || !strings.HasSuffix(budget, "00:00:00") {
		t.Errorf("budget row: got %q, want daily-cap spent to its 0.10 cap, resetting at midnight", budget)
	}
	for sel, want := range map[string]string{
		`.currency`:                         "EUR",
		`.countries td.key`:                 "JP",
		`.countries td.cost`:                "0.10",
		`.prefixes td.key`:                  "(JP)",
		`.days tbody tr:last-child td.cost`: "0.10",
	} {
		if got := browser.Read(t, ctx, chromedp.Text(css(sel))); !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q in it", sel, got, want)
		}
	}
}
