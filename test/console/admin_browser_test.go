package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"otpgate/internal/pii"
	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// newAdminBrowser is browser.New logged in to the console: every request carries the
// admin token as HTTP Basic, as a browser resends it after its login prompt.
func newAdminBrowser(t *testing.T, path, token string) context.Context {
	t.Helper()
	ctx := browser.New(t, path)
	login := "Basic " + base64.StdEncoding.EncodeToString([]byte("support:"+token))
	browser.Do(t, ctx, chromedp.Func(func(ctx context.Context, tab *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tab, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Authorization": login},
		})
		return err
	}))
	return ctx
}

// css selects by CSS selector, the only kind the browser tests use.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// TestAdminConsoleInBrowser drives the console in headless Chromium against a real
// server over Redis and PostgreSQL: log in, filter the history to one phone, open a
// verification, reset a phone's limits and see the limiter let it send again, and see
// the charts drawn.
func TestAdminConsoleInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{"OTP_DEFAULT_REGION": "JP", "OTP_LIMIT_IP": "100/1h"})
	in := servertest.Start(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.Stderr)
		}
	})
	const phoneA, phoneB = "+819012345678", "+819098765432"

	// Phone A: verified after one wrong guess. Phone B: sent once, then blocked by its minute rule.
	servertest.WantStatus(t, servertest.Send(t, in, phoneA), http.StatusCreated, "")
	code := servertest.LastCode(t, p, phoneA)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phoneA, "code": wrong}), http.StatusUnprocessableEntity, "invalid_code")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phoneA, "code": code}), http.StatusOK, "")
	servertest.WantStatus(t, servertest.Send(t, in, phoneB), http.StatusCreated, "")
	servertest.WantStatus(t, servertest.Send(t, in, phoneB, "User-Agent", "second-client"), http.StatusTooManyRequests, "rate_limited")
	waitForBlockedRow(t, in, env["ADMIN_TOKEN"])

	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)

	t.Run("FilterHistoryToOnePhone", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/"),
			chromedp.WaitVisible(css(`table.rows`)),
			chromedp.SetValue(css(`input[name="phone"]`), "090-1234-5678"),
			chromedp.Click(css(`form.filters button[type="submit"]`)),
			chromedp.WaitVisible(css(`input[name="phone"][value="`+phoneA+`"]`)),
		)
		phones := browser.Read(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('td.phone')).map(td => td.textContent)`))
		if len(phones) == 0 {
			t.Fatal("no sends listed")
		}
		for _, ph := range phones {
			if ph != phoneA {
				t.Errorf("filtered history lists %q, want only %s", ph, phoneA)
			}
		}
		shots := map[string][]byte{"admin-history.png": browser.Read(t, ctx, chromedp.FullScreenshot(100))}
		browser.Do(t, ctx, chromedp.EmulateViewport(390, 844))
		shots["admin-history-phone.png"] = browser.Read(t, ctx, chromedp.FullScreenshot(100))
		browser.Do(t, ctx, chromedp.EmulateViewport(1280, 900))
		for name, png := range shots {
			saveArtifact(t, dir, name, png)
		}
	})

	t.Run("OpenVerification", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Click(css(`a.verification`), chromedp.NodeVisible),
			chromedp.WaitVisible(css(`table.attempts`)),
		)
		attempts := browser.Read(t, ctx, chromedp.Text(css(`table.attempts`)))
		facts := browser.Read(t, ctx, chromedp.Text(css(`dl.facts`)))
		saveArtifact(t, dir, "admin-verification.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		if !strings.Contains(attempts, "invalid_code") || !strings.Contains(attempts, "approved") {
			t.Errorf("attempts: got %q, want the wrong guess and the approval", attempts)
		}
		if !strings.Contains(facts, phoneA) || !strings.Contains(facts, "approved") {
			t.Errorf("facts: got %q, want phone A approved", facts)
		}
	})

	t.Run("ResetLimit", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/limits?phone="+url.QueryEscape("090 9876 5432")),
			chromedp.WaitVisible(css(`table.limits`)),
		)
		usedJS := `Array.from(document.querySelectorAll('table.limits span.used')).map(e => e.textContent).join(" ")`
		before := browser.Read(t, ctx, chromedp.Evaluate[string](usedJS))
		browser.Do(t, ctx,
			chromedp.Click(css(`form[action="/admin/limits/reset"] button`)),
			chromedp.WaitVisible(css(`#confirm-reset`)),
			chromedp.Click(css(`#confirm-reset`)),
			chromedp.WaitVisible(css(`.alert.ok`)),
		)
		notice := browser.Read(t, ctx, chromedp.Text(css(`.alert.ok`)))
		after := browser.Read(t, ctx, chromedp.Evaluate[string](usedJS))
		actions := browser.Read(t, ctx, chromedp.Text(css(`table.actions`)))
		saveArtifact(t, dir, "admin-limits.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		if before != "1/1 1/10 0/10" {
			t.Errorf("used before reset: got %q, want %q", before, "1/1 1/10 0/10")
		}
		if !strings.Contains(notice, phoneB) || after != "0/1 0/10 0/10" {
			t.Errorf("after reset: got notice %q and used %q, want phone B's reset and %q", notice, after, "0/1 0/10 0/10")
		}
		if !strings.Contains(actions, "limit_reset") || !strings.Contains(actions, "phone:"+pii.Mask(phoneB)) {
			t.Errorf("admin actions: got %q, want the reset of phone B", actions)
		}
		// The limiter itself changed: phone B may send again at once.
		r := servertest.Send(t, in, phoneB, "User-Agent", "third-client")
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Errorf("send after reset: got %d %s, want 200 or 201", r.Status, r.Raw)
		}
	})

	t.Run("ChartRenders", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/charts"),
			chromedp.WaitVisible(css(`svg.chart`)),
		)
		charts := browser.Read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg.chart').length`))
		drawn := browser.Read(t, ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('svg.chart rect.bar')).filter(r => r.getBBox().height > 0).length`))
		if charts != 2 || drawn == 0 {
			t.Errorf("got %d charts with %d drawn bars, want 2 charts with bars", charts, drawn)
		}
		saveArtifact(t, dir, "admin-charts.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
	})
}

// submit clicks the button that sel names and waits until the page the form's answer
// brings has replaced this one, which may look the same: the page is marked first, and
// the mark must be gone.
func submit(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	browser.Read(t, ctx, chromedp.Evaluate[bool](`window.beforeSubmit = true`))
	browser.Do(t, ctx, chromedp.Click(css(sel)))
	for deadline := time.Now().Add(browser.StepTimeout); ; time.Sleep(20 * time.Millisecond) {
		// Asked while the page navigates, the question fails: ask again.
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.beforeSubmit === undefined && document.readyState === "complete"`))
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("clicking %s: the answer's page never replaced the form (%v)\n%s", sel, err, browser.PageState(ctx))
		}
	}
}

// saveArtifact writes a screenshot and logs where it is.
func saveArtifact(t *testing.T, dir, name string, png []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("artifact: %v", err)
	}
	t.Logf("screenshot: %s", path)
}

// waitForBlockedRow waits until the asynchronous history writer has stored the blocked send.
func waitForBlockedRow(t *testing.T, in *servertest.Instance, token string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, in.Admin+"/admin/api/sends?status=blocked", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := servertest.Client.Do(req)
		if err != nil {
			t.Fatalf("GET sends: %v", err)
		}
		var page struct {
			Sends []struct{ Status string } `json:"sends"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET sends: got %d, %v", resp.StatusCode, err)
		}
		if len(page.Sends) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("the blocked send never reached the history"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
