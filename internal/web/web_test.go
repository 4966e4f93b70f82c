package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"otpgate/internal/contact"
	"otpgate/internal/web"
)

// webDir is web/ of the repository, from this package's directory.
var webDir = filepath.Join("..", "..", "web")

// needNode returns node for the tests that rebuild the bundle, after web/'s npm packages
// were installed (make web-node); without them the test is skipped, or fails under CI=true.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(webDir, "node_modules", "esbuild", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and web/node_modules are needed (make web-node): %v", err)
		}
		t.Skipf("node and web/node_modules are needed (make web-node): %v", err)
	}
	return node
}

// TestBundleIsCurrent rebuilds the component as `make web` does and fails when the
// committed static/otpgate-verify.js differs: web/component changed and was not rebuilt.
func TestBundleIsCurrent(t *testing.T) {
	node := needNode(t)
	cmd := exec.Command(node, "build.mjs", "--check")
	cmd.Dir = filepath.Join(webDir, "component")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v: %s", err, out)
	}
}

// TestComponentSpeaksEveryMessageLocale holds the component's words to the locales the
// messages ship in: a locale added to otp must be added to web/component/src/messages.ts.
func TestComponentSpeaksEveryMessageLocale(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(webDir, "component", "src", "messages.ts"))
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(src, []byte("export const texts"))
	if start < 0 {
		t.Fatal("no texts in messages.ts")
	}
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  "?([A-Za-z-]+)"?[:,]`).FindAllSubmatch(src[start:], -1) {
		have[string(m[1])] = true
	}
	for _, l := range contact.KnownLocales() {
		if !have[l] {
			t.Errorf("messages.ts has no texts for %s", l)
		}
	}
}

func TestScript(t *testing.T) {
	h := web.Script()
	get := func(header ...string) *http.Response {
		r := httptest.NewRequest(http.MethodGet, web.ScriptPath, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}

	t.Run("PlainIsTheBundle", func(t *testing.T) {
		res := get()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Fatalf("got %d %v, want 200 text/javascript unencoded", res.StatusCode, res.Header)
		}
		if !bytes.Contains(body, []byte(`"otpgate-verify"`)) {
			t.Errorf("got %d bytes without the element's name, want the component", len(body))
		}
	})
	t.Run("GzipWhenAccepted", func(t *testing.T) {
		plain, _ := io.ReadAll(get().Body)
		res := get("Accept-Encoding", "br, gzip")
		if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("got %v, want gzip varying by Accept-Encoding", res.Header)
		}
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(zr)
		if !bytes.Equal(got, plain) {
			t.Errorf("gunzipped %d bytes, want the %d of the bundle", len(got), len(plain))
		}
		if res := get("Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
			t.Errorf("gzip;q=0: got %q, want no encoding", res.Header.Get("Content-Encoding"))
		}
	})
	t.Run("ETagRevalidates", func(t *testing.T) {
		etag := get().Header.Get("ETag")
		if res := get("If-None-Match", etag); res.StatusCode != http.StatusNotModified {
			t.Errorf("got %d, want 304 for its own ETag %s", res.StatusCode, etag)
		}
	})
}

func TestDemo(t *testing.T) {
	h := web.Demo(slog.New(slog.DiscardHandler))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, `/demo?app=a"><script>x()</script>&lang=ja&channels=sms+email&webotp`, nil))
	body := w.Body.String()
	csp := w.Header().Get("Content-Security-Policy")
	nonce := regexp.MustCompile(`'nonce-([^']+)'`).FindStringSubmatch(csp)
	if w.Code != 200 || nonce == nil || !strings.Contains(csp, "worker-src blob:") {
		t.Fatalf("got %d with CSP %q, want 200 with a nonce and blob: workers", w.Code, csp)
	}
	for _, want := range []string{`<html lang="ja">`, `channels="sms email"`, ` webotp>`, `<script nonce="` + nonce[1] + `">`, `<script src="/otpgate-verify.js">`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>x()") {
		t.Error("the app parameter was written into the page unescaped")
	}
}
