package inproc

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/admin"
	"otpgate/internal/apps"
	"otpgate/internal/events"
	"otpgate/internal/fraud"
	otphttp "otpgate/internal/http"
	"otpgate/internal/server/servertest"
	"otpgate/internal/sms"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/twilioapi"
)

// badTexts are the two kinds of text no route accepts, as raw bytes and as a JSON escape.
var badTexts = []struct{ name, raw, json string }{
	{"NUL", "a\x00b", `a\u0000b`},
	{"InvalidUTF8", "a\xffb", "a\xffb"},
}

// TestInvalidTextIsRefusedEverywhere runs the production server over PostgreSQL, where a
// NUL used to reach a statement and answer 500, and holds it to refusing a NUL or invalid
// UTF-8 with a 4xx that changes nothing: first where the security probe found the 500s
// (key names, app templates, fraud list notes, a validly signed receipt's MessageSid), then
// on every route of both listeners, found by walking their routers, in the path, the
// query and the body.
func TestInvalidTextIsRefusedEverywhere(t *testing.T) {
	const sid, token, accountToken = "AC00000000000000000000000000000abc", "twilio-auth-token", "accounttoken0123456789abcdef0123456789"
	f := smstest.NewTwilio(t, sid, token)
	hook := servertest.NewProvider(t)
	addr := servertest.FreeAddr(t)
	in := servertest.Start(t, servertest.ProdEnv(t, hook, map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr, "OTP_ACCOUNT_TOKEN": accountToken,
		"SMS_PROVIDERS": "twilio,backup:webhook", "TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "TWILIO_BASE_URL": f.URL,
		"TWILIO_FROM": "+15005550006", "SMS_WEBHOOK_URL_BACKUP": hook.URL, "SMS_WEBHOOK_SECRET_BACKUP": hook.Secret,
		"SMS_ROUTES": "*:twilio", "OTP_LIMIT_IP": "off",
	}))
	created := servertest.AdminCall(t, in, http.MethodPost, "/admin/api/apps", map[string]any{"name": "Shop"})
	servertest.WantStatus(t, created, http.StatusCreated, "")
	appID := created.Str("id")
	servertest.WantStatus(t, servertest.Send(t, in, "+14155552671"), http.StatusCreated, "")
	servertest.SettledSends(t, in, "+14155552671") // its outcome is written in the background
	before := textState(t, in, appID)

	t.Run("WhereTheProbeFound500s", func(t *testing.T) {
		for _, b := range badTexts {
			for name, c := range map[string]struct {
				method, path, body, field string
			}{
				"KeyName":       {http.MethodPost, "/admin/api/apps/" + appID + "/keys", `{"name":"` + b.json + `"}`, "name"},
				"AppName":       {http.MethodPatch, "/admin/api/apps/" + appID, `{"name":"` + b.json + `"}`, "name"},
				"AppTemplate":   {http.MethodPatch, "/admin/api/apps/" + appID, `{"templates":{"en":{"sms":"` + b.json + ` {{.Code}}"}}}`, "templates.en.sms"},
				"FraudListNote": {http.MethodPost, "/admin/api/fraud/lists", `{"list":"block","value":"+8190123","note":"` + b.json + `"}`, "note"},
			} {
				t.Run(b.name+"In"+name, func(t *testing.T) {
					r := servertest.AdminCall(t, in, c.method, c.path, c.body)
					if b.name == "InvalidUTF8" {
						// Invalid UTF-8 makes the whole body unreadable as JSON: no field to name.
						servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
						return
					}
					servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
					if errs, _ := r.Body["errors"].(map[string]any); errs[c.field] == nil {
						t.Errorf("got errors %v, want %q named", r.Body["errors"], c.field)
					}
				})
			}
		}
		t.Run("SignedReceiptWithBadMessageSid", func(t *testing.T) {
			u := "http://" + addr + "/v1/receipts/twilio/twilio"
			for _, b := range badTexts {
				form := url.Values{"AccountSid": {sid}, "MessageSid": {"SM" + b.raw}, "MessageStatus": {"delivered"}}
				req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set(sms.TwilioSignatureHeader, sms.TwilioSignature(token, u, form))
				resp, err := servertest.Client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "MessageSid") {
					t.Errorf("%s: got %d %s, want 400 naming MessageSid", b.name, resp.StatusCode, body)
				}
			}
		})
	})

	t.Run("EveryRoute", func(t *testing.T) {
		cookie, csrf := consoleSession(t, in)
		routes, sent := allRoutes(t), 0
		defer func() { t.Logf("%d routes, %d requests", len(routes), sent) }()
		for _, rt := range routes {
			base := in.API
			if rt.admin {
				base = in.Admin
			}
			for _, b := range badTexts {
				for _, req := range badRequests(rt, b.raw, b.json, signing{sid, token, "http://" + addr}) {
					name := rt.method + " " + rt.pattern + " " + b.name + " in " + req.where
					hr, err := http.NewRequest(rt.method, base+req.target, strings.NewReader(req.body))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					hr.Header.Set("Content-Type", req.contentType)
					switch {
					case strings.HasPrefix(rt.pattern, "/admin/api/") || strings.HasPrefix(rt.pattern, "/debug/"):
						hr.Header.Set("Authorization", "Bearer "+servertest.TestAdminToken)
					case rt.admin:
						hr.Header.Set("Authorization", basic("support", servertest.TestAdminToken))
						hr.AddCookie(cookie)
						if req.contentType == formType {
							hr.Body = io.NopCloser(strings.NewReader(req.body + "&csrf=" + url.QueryEscape(csrf)))
							hr.ContentLength = -1
						}
					case strings.HasPrefix(rt.pattern, "/v2/"):
						hr.SetBasicAuth(sid, accountToken)
					case strings.HasPrefix(rt.pattern, "/v1/receipts/"):
						hr.Header.Set(sms.TwilioSignatureHeader, req.signature)
					}
					resp, err := servertest.Client.Do(hr)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					sent++
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					switch {
					case resp.StatusCode >= 500:
						t.Errorf("%s: got %d, want no 5xx; body %.300s", name, resp.StatusCode, body)
					case readsNothing(rt.pattern):
					case resp.StatusCode < 400:
						t.Errorf("%s: got %d, want a 4xx; body %.300s", name, resp.StatusCode, body)
					}
				}
			}
		}
		after := textState(t, in, appID)
		for p, was := range before {
			if after[p] != was {
				t.Errorf("GET %s changed:\nbefore %s\nafter  %s", p, was, after[p])
			}
		}
	})
	if got := in.Stderr.Lines(`"level":"ERROR"`); len(got) > 0 {
		t.Errorf("the server logged errors: %q", got)
	}
}

// signing is what a genuine Twilio callback is signed with: the account, its token and
// the public listener's base URL.
type signing struct{ sid, token, base string }

// route is one route of a listener, as its router knows it.
type route struct {
	method, pattern string
	admin           bool
}

// allRoutes walks the routers both listeners are built from, with every optional part
// present, so that a route added later is swept without a change here.
func allRoutes(t *testing.T) []route {
	t.Helper()
	var out []route
	walk := func(h http.Handler, isAdmin bool) {
		routes, ok := h.(chi.Routes)
		if !ok {
			t.Fatalf("%T is not a chi router", h)
		}
		err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			pattern = strings.ReplaceAll(pattern, "/*/", "/")
			out = append(out, route{method: method, pattern: pattern, admin: isAdmin})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(otphttp.NewServer(otphttp.Deps{Twilio: twilioapi.NewHandler(twilioapi.Deps{})}), false)
	walk(admin.NewServer(admin.Deps{Token: servertest.TestAdminToken, Apps: (*apps.Admin)(nil), Fraud: (*fraud.Admin)(nil),
		Webhooks: (*events.Admin)(nil), Metrics: http.NotFoundHandler()}), true)
	sort.Slice(out, func(i, j int) bool { return out[i].pattern+out[i].method < out[j].pattern+out[j].method })
	if len(out) < 60 {
		t.Fatalf("walked %d routes, want every route of both listeners", len(out))
	}
	return out
}

// readsNothing are the routes that read nothing of a request, so that no text of it can
// be refused: probes, metrics, the documents, the stylesheet and redirects.
func readsNothing(pattern string) bool {
	switch pattern {
	case "/healthz", "/readyz", "/metrics", "/openapi.json", "/", "/admin", "/admin/static/*":
		return true
	}
	return false
}

// badRequest is one request of the sweep.
type badRequest struct {
	where, target, body, contentType, signature string
}

const formType = "application/x-www-form-urlencoded"

// param finds a route's path parameters and wildcard.
var param = regexp.MustCompile(`\{[^}]+\}|\*$`)

// badRequests puts bad (raw, and as a JSON escape) into each path parameter, the query
// and the body of a request to rt, the other parts plausible.
func badRequests(rt route, raw, jsonText string, s signing) []badRequest {
	fill := func(bad int) string {
		i := -1
		return param.ReplaceAllStringFunc(rt.pattern, func(string) string {
			i++
			if i == bad {
				return url.PathEscape(raw)
			}
			return "x"
		})
	}
	ctype, body := "application/json", `{"name":"`+jsonText+`","note":"`+jsonText+`","phone":"`+jsonText+`"}`
	form := url.Values{}
	for _, k := range []string{"name", "note", "value", "list", "kind", "url", "secret", "phone", "ip", "address", "code",
		"To", "Code", "Channel", "FriendlyName", "CustomFriendlyName", "Status", "MessageSid", "MessageStatus"} {
		form.Set(k, raw)
	}
	isForm := (rt.admin && !strings.HasPrefix(rt.pattern, "/admin/api/")) || strings.HasPrefix(rt.pattern, "/v2/") ||
		strings.HasPrefix(rt.pattern, "/v1/receipts/")
	if isForm {
		ctype, body = formType, form.Encode()
	}
	var out []badRequest
	n := len(param.FindAllString(rt.pattern, -1))
	for i := range n {
		out = append(out, badRequest{where: "path parameter " + param.FindAllString(rt.pattern, -1)[i], target: fill(i), contentType: ctype})
	}
	ok := fill(-1)
	out = append(out, badRequest{where: "query", target: ok + "?q=" + url.QueryEscape(raw) + "&" + url.QueryEscape(raw) + "=1", contentType: ctype})
	if rt.method != http.MethodGet && rt.method != http.MethodHead {
		out = append(out, badRequest{where: "body", target: ok, body: body, contentType: ctype})
	}
	if strings.HasPrefix(rt.pattern, "/v1/receipts/") {
		// A genuine callback of the configured Twilio instance, signed over its URL.
		target := "/v1/receipts/twilio/twilio"
		f := url.Values{"AccountSid": {s.sid}, "MessageSid": {"SM" + raw}, "MessageStatus": {"delivered"}}
		out = append(out, badRequest{where: "signed body", target: target, body: f.Encode(), contentType: formType,
			signature: sms.TwilioSignature(s.token, s.base+target, f)})
	}
	for i := range out {
		if out[i].signature == "" && strings.HasPrefix(rt.pattern, "/v1/receipts/") {
			out[i].signature = "forged"
		}
	}
	return out
}

// textState is what the sweep must not change, as the admin API shows it: apps and
// their keys, webhooks and test numbers, the fraud lists and settings, and history.
func textState(t *testing.T, in *servertest.Instance, appID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{"/admin/api/apps", "/admin/api/apps/" + appID, "/admin/api/apps/" + appID + "/webhooks",
		"/admin/api/apps/" + appID + "/test-numbers", "/admin/api/fraud/lists", "/admin/api/fraud/config", "/admin/api/sends?limit=20"} {
		r := servertest.AdminCall(t, in, http.MethodGet, p, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, r.Status, r.Raw)
		}
		out[p] = r.Raw
	}
	return out
}

// consoleSession opens a console page as a browser would and returns its CSRF cookie and token.
func consoleSession(t *testing.T, in *servertest.Instance) (*http.Cookie, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, in.Admin+"/admin/limits", nil)
	req.Header.Set("Authorization", basic("support", servertest.TestAdminToken))
	resp, err := servertest.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(string(body))
	if m == nil || len(resp.Cookies()) == 0 {
		t.Fatalf("no CSRF session: %d", resp.StatusCode)
	}
	return resp.Cookies()[0], m[1]
}

func basic(user, pass string) string { return "Basic " + servertest.BasicAuth(user, pass) }
