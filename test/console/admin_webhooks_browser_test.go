package console

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestWebhooksConsoleInBrowser adds webhooks on the app page (a bad one first), test-sends,
// finds a parked delivery of an endpoint that was down, redelivers it once the endpoint is
// back, and deletes a webhook.
func TestWebhooksConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	// Retried for a moment only, so that the down endpoint's events park quickly.
	env := servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{"OTP_LIMIT_IP": "off", "OTP_EVENTS_RETRY_FOR": "300ms"}))
	in := servertest.Start(t, env)
	up := eventstest.New(t, servertest.HookSecret)
	down := eventstest.New(t, servertest.HookSecret)
	down.Down()
	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)
	rows := func() int {
		return browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('table.webhooks tbody tr').length`))
	}

	// A URL the form refuses: the problem names the field and nothing is added.
	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/apps/default"),
		chromedp.WaitVisible(css(`#add-webhook`)),
		chromedp.SetAttributeValue(css(`#webhook-url`), "type", "text"),
		chromedp.SetValue(css(`#webhook-url`), "ftp://example.com/"),
		chromedp.Click(css(`input[value="verification.created"]`)),
		chromedp.Click(css(`#add-webhook`)),
		chromedp.WaitVisible(css(`.alert.error`)),
	)
	if problems := browser.Read(t, ctx, chromedp.Text(css(`.alert.error`))); !strings.Contains(problems, "url") {
		t.Errorf("bad URL: got %q, want the url named", problems)
	}
	if n := rows(); n != 0 {
		t.Errorf("after the bad URL: got %d webhooks, want none", n)
	}
	if checked := browser.Read(t, ctx, chromedp.Evaluate[bool](`document.querySelector('input[value="verification.created"]').checked`)); !checked {
		t.Error("the form lost the event type it was given")
	}

	add := func(url string, types ...string) string {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.Navigate(in.Admin + "/admin/apps/default"),
			chromedp.WaitVisible(css(`#add-webhook`)),
			chromedp.SetValue(css(`#webhook-url`), url),
		}
		for _, typ := range types {
			steps = append(steps, chromedp.Click(css(`input[value="`+typ+`"]`)))
		}
		steps = append(steps, chromedp.Click(css(`#add-webhook`)), chromedp.WaitVisible(css(`#webhook-secret`)))
		browser.Do(t, ctx, steps...)
		return strings.TrimSpace(browser.Read(t, ctx, chromedp.Text(css(`#webhook-secret`))))
	}
	upSecret := add(up.URL, events.VerificationCreated, events.VerificationSent)
	if !strings.HasPrefix(upSecret, "whsec_") {
		t.Fatalf("secret: got %q, want a generated one", upSecret)
	}
	up.SetSecret(upSecret)
	down.SetSecret(add(down.URL, events.VerificationCreated))
	if n := rows(); n != 2 {
		t.Fatalf("got %d webhooks, want 2", n)
	}
	saveArtifact(t, dir, "admin-webhooks.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	// Test-send to the endpoint that is up.
	browser.Do(t, ctx,
		chromedp.Click(css(`tr[data-webhook] button.test-webhook`)),
		chromedp.WaitVisible(css(`#webhook-test-result`)),
	)
	if res := browser.Read(t, ctx, chromedp.Text(css(`#webhook-test-result`))); !strings.Contains(res, "delivered (204)") {
		t.Errorf("test send: got %q, want delivered (204)", res)
	}

	r := servertest.Send(t, in, servertest.NewPhone())
	servertest.WantStatus(t, r, http.StatusCreated, "")
	if !up.WaitFor(10*time.Second, func(evs []events.Event) bool { return len(servertest.TypesOf(evs, r.Str("id"))) == 2 }) {
		t.Fatalf("the endpoint that is up got %v, want created and sent", servertest.TypesOf(up.Events(), r.Str("id")))
	}

	// The endpoint that is down: its event parks; the page shows it with its error.
	downID := browser.Read(t, ctx, chromedp.Evaluate[string](`document.querySelectorAll('tr[data-webhook]')[1].dataset.webhook`))
	page := in.Admin + "/admin/apps/default/webhooks/" + downID
	deadline := time.Now().Add(15 * time.Second)
	for {
		browser.Do(t, ctx, chromedp.Navigate(page+"?status=parked"), chromedp.WaitVisible(css(`h1`)))
		if browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('button.redeliver').length`)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no parked delivery after 15s:\n%s", browser.Read(t, ctx, chromedp.Text(css(`main`))))
		}
		time.Sleep(100 * time.Millisecond)
	}
	row := browser.Read(t, ctx, chromedp.Text(css(`table.deliveries tbody tr`)))
	if !strings.Contains(row, "parked") || !strings.Contains(row, events.VerificationCreated) || !strings.Contains(browser.Read(t, ctx, chromedp.Text(css(`td.last-error`))), "connect") {
		t.Errorf("parked row: got %q, want the created event parked after connection failures", row)
	}
	saveArtifact(t, dir, "admin-webhook-deliveries.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))

	down.Up()
	browser.Do(t, ctx, chromedp.Click(css(`button.redeliver`)), chromedp.WaitNotPresent(css(`button.redeliver`)))
	if !down.WaitFor(10*time.Second, func(evs []events.Event) bool { return len(evs) == 1 && evs[0].Type == events.VerificationCreated }) {
		t.Fatalf("after redeliver the endpoint got %v, want the created event", down.Events())
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		browser.Do(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(css(`td.delivery-status`)))
		if st := browser.Read(t, ctx, chromedp.Text(css(`td.delivery-status`))); st == events.Delivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redelivered event is not shown delivered:\n%s", browser.Read(t, ctx, chromedp.Text(css(`main`))))
		}
		time.Sleep(100 * time.Millisecond)
	}

	browser.Do(t, ctx,
		chromedp.Navigate(in.Admin+"/admin/apps/default"),
		chromedp.WaitVisible(css(`button.delete-webhook`)),
		chromedp.Click(css(`tr[data-webhook="`+downID+`"] button.delete-webhook`)),
		chromedp.WaitNotPresent(css(`tr[data-webhook="`+downID+`"]`)),
	)
	if n := rows(); n != 1 {
		t.Errorf("after deleting: got %d webhooks, want 1", n)
	}
}
