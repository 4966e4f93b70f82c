package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"otpgate/internal/pii"
)

// findChromium returns the browser to drive; without one the test is skipped, or
// fails under CI=true, where it must run.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium or chromium-browser on PATH: install the Debian package chromium")
	}
	t.Skip("no chromium or chromium-browser on PATH; install the Debian package chromium to run the browser test")
	return ""
}

// artifactDir is where screenshots go: $OTPGATE_ARTIFACTS when set, else the test's temp dir.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OTPGATE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	return dir
}

// newBrowser starts a headless Chromium with a fresh profile and nothing running in
// the background; it is stopped at cleanup.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first call starts the browser, which lives as long as its context: that
	// one gets no timeout; each later step gets its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// newAdminBrowser is newBrowser logged in to the console: every request carries the
// admin token as HTTP Basic, as a browser resends it after its login prompt.
func newAdminBrowser(t *testing.T, path, token string) context.Context {
	t.Helper()
	ctx := newBrowser(t, path)
	login := "Basic " + base64.StdEncoding.EncodeToString([]byte("support:"+token))
	browse(t, ctx, chromedp.Func(func(ctx context.Context, tab *chromedp.Target) error {
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

// browserStepTimeout bounds one group of browser steps.
const browserStepTimeout = 30 * time.Second

// TestAdminConsoleInBrowser drives the console in headless Chromium against a real
// server over Redis and PostgreSQL: log in, filter the history to one phone, open a
// verification, reset a phone's limits and see the limiter let it send again, and see
// the charts drawn.
func TestAdminConsoleInBrowser(t *testing.T) {
	browser := findChromium(t)
	p := newProvider(t)
	env := prodEnv(t, p, map[string]string{"OTP_DEFAULT_REGION": "JP", "OTP_LIMIT_IP": "100/1h"})
	in := startServer(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.stderr)
		}
	})
	const phoneA, phoneB = "+819012345678", "+819098765432"

	// Phone A: verified after one wrong guess. Phone B: sent once, then blocked by its minute rule.
	wantStatus(t, send(t, in, phoneA), http.StatusCreated, "")
	code := lastCode(t, p, phoneA)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	wantStatus(t, check(t, in, map[string]string{"phone": phoneA, "code": wrong}), http.StatusUnprocessableEntity, "invalid_code")
	wantStatus(t, check(t, in, map[string]string{"phone": phoneA, "code": code}), http.StatusOK, "")
	wantStatus(t, send(t, in, phoneB), http.StatusCreated, "")
	wantStatus(t, send(t, in, phoneB, "User-Agent", "second-client"), http.StatusTooManyRequests, "rate_limited")
	waitForBlockedRow(t, in, env["ADMIN_TOKEN"])

	ctx := newAdminBrowser(t, browser, env["ADMIN_TOKEN"])
	dir := artifactDir(t)

	t.Run("FilterHistoryToOnePhone", func(t *testing.T) {
		browse(t, ctx,
			chromedp.Navigate(in.admin+"/admin/"),
			chromedp.WaitVisible(css(`table.rows`)),
			chromedp.SetValue(css(`input[name="phone"]`), "090-1234-5678"),
			chromedp.Click(css(`form.filters button[type="submit"]`)),
			chromedp.WaitVisible(css(`input[name="phone"][value="`+phoneA+`"]`)),
		)
		phones := read(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('td.phone')).map(td => td.textContent)`))
		if len(phones) == 0 {
			t.Fatal("no sends listed")
		}
		for _, ph := range phones {
			if ph != phoneA {
				t.Errorf("filtered history lists %q, want only %s", ph, phoneA)
			}
		}
		shots := map[string][]byte{"admin-history.png": read(t, ctx, chromedp.FullScreenshot(100))}
		browse(t, ctx, chromedp.EmulateViewport(390, 844))
		shots["admin-history-phone.png"] = read(t, ctx, chromedp.FullScreenshot(100))
		browse(t, ctx, chromedp.EmulateViewport(1280, 900))
		for name, png := range shots {
			saveArtifact(t, dir, name, png)
		}
	})

	t.Run("OpenVerification", func(t *testing.T) {
		browse(t, ctx,
			chromedp.Click(css(`a.verification`), chromedp.NodeVisible),
			chromedp.WaitVisible(css(`table.attempts`)),
		)
		attempts := read(t, ctx, chromedp.Text(css(`table.attempts`)))
		facts := read(t, ctx, chromedp.Text(css(`dl.facts`)))
		saveArtifact(t, dir, "admin-verification.png", read(t, ctx, chromedp.FullScreenshot(100)))
		if !strings.Contains(attempts, "invalid_code") || !strings.Contains(attempts, "approved") {
			t.Errorf("attempts: got %q, want the wrong guess and the approval", attempts)
		}
		if !strings.Contains(facts, phoneA) || !strings.Contains(facts, "approved") {
			t.Errorf("facts: got %q, want phone A approved", facts)
		}
	})

	t.Run("ResetLimit", func(t *testing.T) {
		browse(t, ctx,
			chromedp.Navigate(in.admin+"/admin/limits?phone="+url.QueryEscape("090 9876 5432")),
			chromedp.WaitVisible(css(`table.limits`)),
		)
		usedJS := `Array.from(document.querySelectorAll('table.limits span.used')).map(e => e.textContent).join(" ")`
		before := read(t, ctx, chromedp.Evaluate[string](usedJS))
		browse(t, ctx,
			chromedp.Click(css(`form[action="/admin/limits/reset"] button`)),
			chromedp.WaitVisible(css(`#confirm-reset`)),
			chromedp.Click(css(`#confirm-reset`)),
			chromedp.WaitVisible(css(`.alert.ok`)),
		)
		notice := read(t, ctx, chromedp.Text(css(`.alert.ok`)))
		after := read(t, ctx, chromedp.Evaluate[string](usedJS))
		actions := read(t, ctx, chromedp.Text(css(`table.actions`)))
		saveArtifact(t, dir, "admin-limits.png", read(t, ctx, chromedp.FullScreenshot(100)))
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
		r := send(t, in, phoneB, "User-Agent", "third-client")
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Errorf("send after reset: got %d %s, want 200 or 201", r.Status, r.Raw)
		}
	})

	t.Run("ChartRenders", func(t *testing.T) {
		browse(t, ctx,
			chromedp.Navigate(in.admin+"/admin/charts"),
			chromedp.WaitVisible(css(`svg.chart`)),
		)
		charts := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg.chart').length`))
		drawn := read(t, ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('svg.chart rect.bar')).filter(r => r.getBBox().height > 0).length`))
		if charts != 2 || drawn == 0 {
			t.Errorf("got %d charts with %d drawn bars, want 2 charts with bars", charts, drawn)
		}
		saveArtifact(t, dir, "admin-charts.png", read(t, ctx, chromedp.FullScreenshot(100)))
	})
}

// browse runs browser steps, failing the test on the first error.
func browse(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("browser: %v\n%s", err, pageState(ctx))
	}
}

// pageState describes where the browser is, for a failure message.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return fmt.Sprintf("page %s shows:\n%s", where, text)
}

// submit clicks the button that sel names and waits until the page the form's answer
// brings has replaced this one, which may look the same: the page is marked first, and
// the mark must be gone.
func submit(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	read(t, ctx, chromedp.Evaluate[bool](`window.beforeSubmit = true`))
	browse(t, ctx, chromedp.Click(css(sel)))
	for deadline := time.Now().Add(browserStepTimeout); ; time.Sleep(20 * time.Millisecond) {
		// Asked while the page navigates, the question fails: ask again.
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.beforeSubmit === undefined && document.readyState === "complete"`))
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("clicking %s: the answer's page never replaced the form (%v)\n%s", sel, err, pageState(ctx))
		}
	}
}

// read runs one browser action and returns its value, failing the test on error.
func read[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("browser: %v\n%s", err, pageState(ctx))
	}
	return v
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
func waitForBlockedRow(t *testing.T, in *instance, token string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, in.admin+"/admin/api/sends?status=blocked", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
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
