// Package web serves otpgate's browser code on the public listener: the <otpgate-verify>
// web component, built from web/component into static/otpgate-verify.js and committed, so
// that the server needs no npm, and, in dev mode, a demo page that uses it. It knows nothing
// else of otpgate. docs/browser.md describes the component.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// ScriptPath is where the public listener serves the component's script (internal/http's
// route table names it too).
const ScriptPath = "/otpgate-verify.js"

//go:embed static/otpgate-verify.js
var script []byte

//go:embed demo.html
var demoHTML string

// Script returns the component's script, itself or gzipped as the client accepts, with an
// ETag of its content and a short cache life (a new release of the server may change it).
func Script() http.Handler {
	sum := sha256.Sum256(script)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(script)
	_ = zw.Close()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("X-Content-Type-Options", "nosniff")
		// Any page may load it, as it would from a CDN; what it may call is CORS's business.
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		h.Add("Vary", "Accept-Encoding")
		body := script
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			h.Set("ETag", etag[:len(etag)-1]+`-gz"`)
			body = gz.Bytes()
		} else {
			h.Set("ETag", etag)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip (without q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

var demoPage = template.Must(template.New("demo").Parse(demoHTML))

// demoData fills the demo page.
type demoData struct {
	App, Channels, Lang, Country, Nonce string
	WebOTP                              bool
}

// Demo returns the demo page: the component against this server, configured by the query
// (app, channels, lang, country, webotp), under a Content-Security-Policy as strict as the
// component allows, so that the demo also shows what an integrating page must permit.
func Demo(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		d := demoData{
			App: orDefault(q.Get("app"), "default"), Channels: orDefault(q.Get("channels"), "sms voice email"),
			Lang: q.Get("lang"), Country: q.Get("country"), WebOTP: q.Has("webotp"), Nonce: nonce(),
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'nonce-"+d.Nonce+"'; worker-src blob:; "+
			"connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		var buf bytes.Buffer
		if err := demoPage.Execute(&buf, d); err != nil {
			log.Error("demo page", "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(buf.Bytes())
	})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nonce is a fresh CSP nonce for the page's one inline script.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	// URL-safe letters: html/template writes a standard alphabet's + as &#43; in the
	// attribute, which a browser reads back but a reader of the page source does not.
	return base64.RawURLEncoding.EncodeToString(b[:])
}
