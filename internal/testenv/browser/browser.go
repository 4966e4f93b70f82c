// Package browser starts headless Chromium for the browser tests and runs chromedp steps
// with a bound on each, describing the page when one fails. Chromium is Debian's package,
// which test/setup installs; under CI=true a test fails without it instead of skipping.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"otpgate/internal/testenv"
)

// StepTimeout bounds one group of browser steps.
const StepTimeout = 30 * time.Second

// Chromium returns the browser to drive; without one the test is skipped, or fails under
// CI=true, where it must run.
func Chromium(tb testing.TB) string {
	tb.Helper()
	testenv.NeedsService(tb, "a browser")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("no chromium or chromium-browser on PATH: install the Debian package chromium (test/setup does)")
	}
	tb.Skip("no chromium or chromium-browser on PATH; install the Debian package chromium to run the browser test")
	return ""
}

// New starts a headless Chromium with a fresh profile and nothing running in the
// background; it is stopped at cleanup.
func New(tb testing.TB, path string) context.Context {
	tb.Helper()
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
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	tb.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first call starts the browser, which lives as long as its context: that one gets
	// no timeout; each later step gets its own.
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Do runs steps within StepTimeout and fails the test with the page's state if one fails.
func Do(tb testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		tb.Fatalf("browser: %v\n%s", err, PageState(ctx))
	}
}

// Read runs one step that answers a value, as Do runs steps.
func Read[T any](tb testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	tb.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		tb.Fatalf("browser: %v\n%s", err, PageState(ctx))
	}
	return v
}

// PageState describes where the browser is, for a failure message.
func PageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return fmt.Sprintf("page %s shows:\n%s", where, text)
}

// ArtifactDir is where screenshots go: $OTPGATE_ARTIFACTS when set, else the test's temp dir.
func ArtifactDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("OTPGATE_ARTIFACTS")
	if dir == "" {
		return tb.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("artifacts: %v", err)
	}
	return dir
}

// Screenshot saves the whole page as name in dir and logs where it is.
func Screenshot(tb testing.TB, ctx context.Context, dir, name string) {
	tb.Helper()
	png := Read(tb, ctx, chromedp.FullScreenshot(100))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.Fatalf("artifact: %v", err)
	}
	tb.Logf("screenshot: %s", path)
}
