package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv/browser"
)

// TestDeliveryConsoleInBrowser sends through a failing and a working provider, reports
// receipts, and reads the delivery rates, each send's encoding and attempts, and the
// apps' SMS options in the console.
func TestDeliveryConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	first, second := smstest.New(t, "first-secret"), smstest.New(t, "second-secret")
	first.Set(smstest.Reply{Status: http.StatusBadRequest})
	env := servertest.TwoWebhooks(t, first, second, nil)
	in := servertest.Start(t, env)

	phones := []string{servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()}
	for i, phone := range phones {
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusCreated, "")
		status := map[int]string{0: "delivered", 1: "undelivered"}[i]
		if status == "" {
			continue
		}
		body := `{"id":"` + second.Received(phone)[0].ID + `","status":"` + status + `","error":"` + map[string]string{"undelivered": "handset off"}[status] + `"}`
		if st := servertest.PostReceipt(t, in, "second", body, sms.Sign(second.Secret, time.Now(), []byte(body))); st != http.StatusNoContent {
			t.Fatalf("receipt: got %d, want 204", st)
		}
	}
	servertest.SettledSends(t, in, phones[2])

	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/"),
		chromedp.WaitVisible(css(`nav a[href="/admin/delivery"]`)),
		chromedp.Click(css(`nav a[href="/admin/delivery"]`)),
		chromedp.WaitVisible(css(`table.delivery-rates`)),
	)
	rows := browser.Read(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.delivery-rates tbody tr')).map(tr => Array.from(tr.cells).map(c => c.textContent).join('|'))`))
	if len(rows) != 1 || rows[0] != "sms|JP|second|3|3|1|1|50.0%|3" {
		t.Errorf("delivery rates: got %q, want sms|JP|second|3|3|1|1|50.0%%|3", rows)
	}
	browser.Do(t, ctx,
		chromedp.SetValue(css(`select[name="since"]`), "1h"),
		chromedp.Click(css(`form.filters button[type="submit"]`)),
		chromedp.WaitReady(css(`select[name="since"] option[value="1h"][selected]`)),
		chromedp.WaitVisible(css(`table.delivery-rates`)),
	)
	if rate := browser.Read(t, ctx, chromedp.Text(css(`td.rate`))); rate != "50.0%" {
		t.Errorf("last hour: got rate %q, want 50.0%%", rate)
	}
	saveArtifact(t, dir, "admin-delivery.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/?phone="+url.QueryEscape(phones[1])),
		chromedp.WaitVisible(css(`table.rows`)),
	)
	for sel, want := range map[string]string{
		`td.encoding`: "UCS-2 · 1 segment", // a Japanese number's SMS is in Japanese
		`td.provider`: "first: failed",
		`td.delivery`: "handset off",
		`td.channel`:  "sms JP",
	} {
		if got := browser.Read(t, ctx, chromedp.Text(css(sel))); !strings.Contains(got, want) {
			t.Errorf("history %s: got %q, want %q in it", sel, got, want)
		}
	}
	saveArtifact(t, dir, "admin-history-delivery.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/apps"),
		chromedp.WaitVisible(css(`#create-app`)),
		chromedp.SetValue(css(`input[name="name"]`), "Web shop"),
		chromedp.SetValue(css(`input[name="channels"]`), "sms, email"),
		chromedp.SetValue(css(`input[name="webotp_domain"]`), "shop.example.com"),
		chromedp.SetValue(css(`input[name="android_app_hash"]`), "FA+9qCX9VSu"),
		chromedp.Click(css(`#create-app`)),
		chromedp.WaitVisible(css(`#create-key`)),
	)
	appID := strings.TrimPrefix(browser.Read(t, ctx, chromedp.Evaluate[string](`location.pathname`)), "/admin/apps/")
	r := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+appID, nil)
	if !strings.Contains(r.Raw, `"channels":["email","sms"]`) || !strings.Contains(r.Raw, `"webotp_domain":"shop.example.com"`) ||
		!strings.Contains(r.Raw, `"android_app_hash":"FA+9qCX9VSu"`) {
		t.Errorf("app made in the console: got %s, want its channels and SMS options", r.Raw)
	}
}
