package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	"otpgate/client/admin"
	"otpgate/internal/apitest"
	"otpgate/internal/server/servertest"
)

// TestAPIFuzz drives a dev-mode server with requests generated from the OpenAPI documents,
// as they are and malformed (wrong types, unknown and duplicate fields, bad content types,
// oversized bodies, bad Idempotency-Keys, paths and methods the documents do not list, a
// NUL or invalid UTF-8 in a JSON string, a path or a query parameter),
// and holds every answer to the documents: no 5xx, nothing outside them, no malformed
// request answered but with a 4xx. Around every public request it reads the limiter state
// of the client IP and the phone, the newest history row and the messages the log sender
// printed: a malformed request changes none of them, nor does any refused send. Around
// every admin request with bad text it reads the apps, the fraud lists and settings and
// the newest history row, which it must not change.
//
// Each property runs rapid's default 100 examples; -rapid.checks=N runs more.
func TestAPIFuzz(t *testing.T) {
	in := servertest.Start(t, fuzzEnv())
	fuzzAPI(t, in, outbox{
		count:    func() int { return len(in.Stderr.Lines(logSenderLine)) },
		lastCode: func(to string) string { return loggedCode(in, to) },
	})
}

// TestAPIFuzzProduction runs TestAPIFuzz's properties against a production server: Redis,
// PostgreSQL (with refused sends written by the batch writer, after the answer) and the
// webhook sender to a fake provider, whose deliveries are the messages counted. The fraud
// guard enforces, as it does by default in dev mode.
func TestAPIFuzzProduction(t *testing.T) {
	p := servertest.NewProvider(t)
	env := fuzzEnv()
	env["OTP_FRAUD_GUARD"] = "enforce"
	in := servertest.Start(t, servertest.ProdEnv(t, p, env))
	fuzzAPI(t, in, outbox{count: p.Calls, lastCode: p.LastCode})
}

// fuzzEnv is the environment both runs share.
func fuzzEnv() map[string]string {
	return map[string]string{
		"ADMIN_TOKEN":           fuzzAdminToken,
		"OTP_TRUSTED_PROXIES":   "127.0.0.1/32",
		"OTP_DEFAULT_REGION":    "JP",
		"OTP_ALLOWED_COUNTRIES": "JP,US",
		"OTP_LIMIT_PHONE":       "3/1m,30/1h",
		"OTP_LIMIT_IP":          "8/1m,80/1h",
	}
}

// outbox is where a server's messages go: how many went out so far, and the code of the
// newest one to an address ("" when none did).
type outbox struct {
	count    func() int
	lastCode func(to string) string
}

// fuzzAPI runs the properties against in, whose messages go to out.
func fuzzAPI(t *testing.T, in *servertest.Instance, out outbox) {
	f := newFuzzer(t, in, out)
	pub, adm := apitest.Public(), apitest.Admin()

	t.Run("Send", rapid.MakeCheck(func(rt *rapid.T) {
		op := pub.Op("sendVerification")
		hints := apitest.Hints{"phone": f.phoneSpelling(), "Idempotency-Key": f.idempotencyKey()}
		f.public(rt, f.draw(rt, op, hints), true)
	}))
	t.Run("Check", rapid.MakeCheck(func(rt *rapid.T) {
		op := pub.Op("checkVerification")
		e164 := rapid.SampledFrom(f.phones).Draw(rt, "phone")
		hints := apitest.Hints{
			"phone": rapid.SampledFrom(append(spellings[e164], e164)).AsAny(),
			"code":  f.code(e164),
			"id":    f.verificationID(e164),
		}
		f.public(rt, f.draw(rt, op, hints), false)
	}))
	t.Run("Receipts", rapid.MakeCheck(func(rt *rapid.T) {
		// Dev mode has no provider that sends receipts, and production's webhook sender
		// takes only signed ones: every callback is refused, and none may change anything.
		f.public(rt, f.draw(rt, pub.Op("deliveryReceipt"), nil), false)
	}))
	totpApp, totpKey := fuzzKeyApp(t, in)
	var totpOps []apitest.Op
	for _, op := range pub.Ops() {
		if strings.Contains(op.Path, "/totp/") {
			totpOps = append(totpOps, op)
		}
	}
	t.Run("TOTP", rapid.MakeCheck(func(rt *rapid.T) {
		// Mostly with the app's key and a small pool of identities, so that factors are
		// created, listed, verified and challenged; now and then without a key, for the
		// default (public) app, or with identities and factor ids that find nothing.
		op := rapid.SampledFrom(totpOps).Draw(rt, "operation")
		hints := apitest.Hints{
			"app_id":    rapid.SampledFrom([]string{totpApp, totpApp, totpApp, "default"}).AsAny(),
			"identity":  rapid.SampledFrom([]string{"fuzz-user-01", "fuzz-user-02", "short", "+819012345678"}).AsAny(),
			"factor_id": rapid.SampledFrom([]string{uuid.NewString(), "not-a-uuid"}).AsAny(),
			"code":      rapid.SampledFrom([]string{"000000", "123456", "12", "abcdef", "123456789"}).AsAny(),
		}
		var r apitest.Request
		if op.Body != nil {
			r = f.draw(rt, op, hints)
		} else {
			r = apitest.Requests(op, hints).Draw(rt, "request") // malformations are of bodies
		}
		if rapid.IntRange(0, 4).Draw(rt, "key") > 0 {
			r.Header.Set("Authorization", "Bearer "+totpKey)
		}
		f.public(rt, r, false)
	}))
	t.Run("UnlistedRoutes", rapid.MakeCheck(func(rt *rapid.T) {
		f.public(rt, apitest.Unrouted(pub, "/").Draw(rt, "request"), false)
	}))
	t.Run("Admin", rapid.MakeCheck(func(rt *rapid.T) {
		ops := adm.Ops()
		op := rapid.SampledFrom(ops).Draw(rt, "operation")
		hints := apitest.Hints{
			"phone": f.phoneSpelling(),
			"ip":    rapid.SampledFrom(append(f.ips, "2001:db8::1", "2001:db8::/64", "999.1.1.1", "")).AsAny(),
			"id":    rapid.OneOf(rapid.Just(uuid.NewString()), f.knownSendID()).AsAny(),
			"wid":   rapid.Just(uuid.NewString()).AsAny(),
			"eid":   rapid.Just(uuid.NewString()).AsAny(),
		}
		var req apitest.Request
		switch rapid.IntRange(0, 9).Draw(rt, "kind") {
		case 0:
			req = apitest.Unrouted(adm, "/admin/api/").Draw(rt, "request")
		case 1, 2, 3:
			if !strings.HasPrefix(op.Path, "/admin/api/") {
				// The probes, metrics and the document read nothing of a request.
				req = apitest.Requests(op, hints).Draw(rt, "request")
				break
			}
			req = apitest.BadText(op, hints).Draw(rt, "request")
		default:
			req = apitest.Requests(op, hints).Draw(rt, "request")
		}
		if req.Malformed == "" || req.Malformed == "unrouted" {
			f.adminRequest(rt, req)
			return
		}
		before := f.adminState(rt)
		f.adminRequest(rt, req)
		if after := f.adminState(rt); after != before {
			rt.Fatalf("%s %s (%s) changed the admin state:\nbefore %s\nafter  %s", req.Method, req.Path, req.Malformed, before, after)
		}
	}))
	t.Logf("answers by operation and status: %v", f.seen)
}

const fuzzAdminToken = "fuzz-admin-token-0123456789"

// spellings are ways of writing each pool number that normalise to it (in region JP).
var spellings = map[string][]string{
	"+819012345610": {"+81 90-1234-5610", "090-1234-5610"},
	"+819012345611": {"+81 (90) 1234 5611", "０９０１２３４５６１１"},
	"+819012345612": {"090.1234.5612"},
	"+819012345613": {"+81-90-1234-5613"},
	"+14155552671":  {"+1 (415) 555-2671", "+1.415.555.2671"},
	"+14155552672":  {"+1 415 555 2672"},
	"+447911123456": {"+44 7911 123456"}, // not an allowed country
}

// fuzzer is the state the properties share: the server, and what they learnt from it.
type fuzzer struct {
	t      *testing.T
	in     *servertest.Instance
	out    outbox
	http   *http.Client
	admin  *admin.ClientWithResponses
	phones []string // E.164 numbers of the pool
	ips    []string
	ids    map[string]string // E.164 → the latest verification id seen for it
	// seen counts the answers by operation (or malformation) and status, for the log.
	seen map[string]int
}

func newFuzzer(t *testing.T, in *servertest.Instance, out outbox) *fuzzer {
	f := &fuzzer{t: t, in: in, out: out, http: &http.Client{}, ids: map[string]string{}, seen: map[string]int{}}
	for e164 := range spellings {
		f.phones = append(f.phones, e164)
	}
	sortStrings(f.phones)
	for i := range 12 {
		f.ips = append(f.ips, fmt.Sprintf("198.51.100.%d", 10+i))
	}
	// The snapshots go through the generated admin client, checked against its document.
	c, err := admin.NewClientWithResponses(in.Admin,
		admin.WithHTTPClient(&http.Client{Transport: apitest.Transport(t, nil, apitest.Admin())}),
		admin.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+fuzzAdminToken)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	f.admin = c
	return f
}

// draw generates a request for op: as the document describes it, malformed, or with bad text.
func (f *fuzzer) draw(rt *rapid.T, op apitest.Op, hints apitest.Hints) apitest.Request {
	switch rapid.IntRange(0, 5).Draw(rt, "malformed") {
	case 0, 1:
		return apitest.Malformed(op, hints).Draw(rt, "request")
	case 2:
		return apitest.BadText(op, hints).Draw(rt, "request")
	}
	return apitest.Requests(op, hints).Draw(rt, "request")
}

// exchange sends r to base and checks the answer against d: never a 5xx, never outside d.
func (f *fuzzer) exchange(rt *rapid.T, d *apitest.Doc, base string, r apitest.Request) (*http.Response, apitest.Result) {
	req, err := r.HTTP(base)
	if err != nil {
		rt.Fatalf("build request: %v", err)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		rt.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	res, err := d.Check(apitest.Exchange{Request: req, RequestBody: r.Body, Status: resp.StatusCode, Header: resp.Header, Body: body})
	if err != nil {
		rt.Fatalf("%v\nrequest %s: %q\nbody: %s", err, r.Malformed, r.Body, body)
	}
	if resp.StatusCode >= 500 {
		rt.Fatalf("%s %s (%s): got %d, want no 5xx; body %s", r.Method, r.Path, r.Malformed, resp.StatusCode, body)
	}
	if r.Malformed != "" && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
		rt.Fatalf("%s %s (%s): got %d, want a 4xx", r.Method, r.Path, r.Malformed, resp.StatusCode)
	}
	f.learn(resp, body)
	what := res.Operation
	if r.Malformed != "" {
		what += " (" + r.Malformed + ")"
	}
	f.seen[fmt.Sprintf("%s %d", what, resp.StatusCode)]++
	return resp, res
}

// public sends r from a client IP of the pool and checks what it spent and sent.
func (f *fuzzer) public(rt *rapid.T, r apitest.Request, isSend bool) {
	ip := rapid.SampledFrom(f.ips).Draw(rt, "client ip")
	r.Header.Set("X-Forwarded-For", ip)
	r.Header.Set("User-Agent", rapid.SampledFrom([]string{"app/1", "app/2"}).Draw(rt, "user agent"))
	phone := phoneIn(r.Body)
	before := f.snapshot(rt, ip, phone)
	began := time.Now()
	resp, res := f.exchange(rt, apitest.Public(), f.in.API, r)
	after := f.snapshot(rt, ip, phone)

	refused := r.Malformed != "" || res.RequestError != nil
	sent := isSend && resp.StatusCode/100 == 2 && resp.Header.Get("Idempotent-Replayed") == ""
	if got, want := after.messages-before.messages, map[bool]int{true: 1, false: 0}[sent]; got != want {
		rt.Fatalf("%s %s (%s) answered %d: got %d messages sent, want %d", r.Method, r.Path, r.Malformed, resp.StatusCode, got, want)
	}
	if refused || (isSend && !sent) {
		if spent := after.spentSince(before); spent != "" {
			rt.Fatalf("%s %s (%s) answered %d, yet spent %s", r.Method, r.Path, r.Malformed, resp.StatusCode, spent)
		}
	}
	// By time, not by the newest row: in production a refused send of an earlier request
	// is written by the batch writer after its answer, maybe during this one.
	if refused && !after.newestAt.Before(began) {
		rt.Fatalf("%s %s (%s) answered %d, yet wrote history (a send at %s)", r.Method, r.Path, r.Malformed, resp.StatusCode, after.newestAt.Format(time.RFC3339Nano))
	}
}

// adminRequest sends r to the admin listener, usually with the token.
func (f *fuzzer) adminRequest(rt *rapid.T, r apitest.Request) {
	switch rapid.IntRange(0, 9).Draw(rt, "credential") {
	case 0:
	case 1:
		r.Header.Set("Authorization", "Bearer wrong-token-0123456789")
	case 2:
		r.Header.Set("Authorization", "Basic "+servertest.BasicAuth("fuzz", fuzzAdminToken))
	default:
		r.Header.Set("Authorization", "Bearer "+fuzzAdminToken)
	}
	f.exchange(rt, apitest.Admin(), f.in.Admin, r)
}

// phoneIn finds the phone of a request body, even a malformed one, so that its limits
// can be inspected; "" when there is none that the pool knows.
func phoneIn(body []byte) string {
	m := regexp.MustCompile(`"phone":"([^"]*)"`).FindSubmatch(body)
	if m == nil {
		return ""
	}
	for e164, ss := range spellings {
		for _, s := range append(ss, e164) {
			if s == string(m[1]) {
				return e164
			}
		}
	}
	return ""
}

// fuzzKeyApp creates an app of access key and one of its keys through the admin API.
func fuzzKeyApp(t *testing.T, in *servertest.Instance) (appID, secret string) {
	t.Helper()
	post := func(path, body string) map[string]any {
		req, err := http.NewRequest(http.MethodPost, in.Admin+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+fuzzAdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: got %d %v (%v)", path, resp.StatusCode, out, err)
		}
		return out
	}
	appID, _ = post("/admin/api/apps", `{"name":"Fuzz TOTP","access":"key"}`)["id"].(string)
	secret, _ = post("/admin/api/apps/"+appID+"/keys", `{"name":"fuzz"}`)["secret"].(string)
	return appID, secret
}
