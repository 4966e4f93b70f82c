package conformance

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	verify "github.com/twilio/twilio-go/rest/verify/v2"

	"otpgate/internal/server/servertest"
	"otpgate/internal/sms/smstest"
)

// twilioSetup is one server with a key app for Twilio's helper libraries, and a
// small HTTP endpoint from which the scripts read the codes the fake provider got.
type twilioSetup struct {
	in                        *servertest.Instance
	keyID, secret, serviceSID string
	codeURL                   string
	provider                  *smstest.Provider
}

// The account credential the helper libraries use for the account-level resources:
// any account SID, and OTP_ACCOUNT_TOKEN.
const (
	twilioAccountSID   = "AC00000000000000000000000000000000"
	twilioAccountToken = "0f1e2d3c4b5a69780f1e2d3c4b5a6978accountToken"
)

func newTwilioSetup(t *testing.T) *twilioSetup {
	t.Helper()
	p := servertest.NewProvider(t)
	// The libraries follow next_page_url, which is absolute under OTP_PUBLIC_URL only.
	addr := servertest.FreeAddr(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_HTTP_ADDR": addr, "OTP_PUBLIC_URL": "http://" + addr,
		"OTP_DUPLICATE_WINDOW": "0", "OTP_LIMIT_PHONE": "100/1h", "OTP_LIMIT_IP": "off",
		"OTP_LIMIT_CHECK_PHONE": "100/1h", "OTP_LIMIT_CHECK_IP": "1000/1h", "OTP_ACCOUNT_TOKEN": twilioAccountToken,
	}))
	app := servertest.CreateApp(t, in, map[string]any{"name": "Twilio clients", "access": "key"})
	keyID, secret := servertest.CreateKey(t, in, app, false)
	codes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := p.LastCode(r.URL.Query().Get("to"))
		if code == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, code)
	}))
	t.Cleanup(codes.Close)
	return &twilioSetup{in: in, keyID: keyID, secret: secret, serviceSID: "VA" + strings.ReplaceAll(app, "-", ""), codeURL: codes.URL, provider: p}
}

// env is the environment the Python and Node scripts read.
func (s *twilioSetup) env() []string {
	phones := []string{servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()}
	more := []string{servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()}
	extra := []string{servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()}
	return append(os.Environ(),
		"OTPGATE_BASE="+s.in.API, "OTPGATE_KEY_ID="+s.keyID, "OTPGATE_SECRET="+s.secret,
		"OTPGATE_SERVICE_SID="+s.serviceSID, "OTPGATE_CODE_URL="+s.codeURL, "OTPGATE_PHONES="+strings.Join(phones, ","),
		"OTPGATE_ACCOUNT_SID="+twilioAccountSID, "OTPGATE_ACCOUNT_TOKEN="+twilioAccountToken, "OTPGATE_MORE_PHONES="+strings.Join(more, ","),
		"OTPGATE_EXTRA_PHONES="+strings.Join(extra, ","))
}

// missing skips a client library that is not installed, or fails under CI=true, where
// .ci/run installs them all.
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed; .ci/run installs it", what)
	}
	t.Skipf("%s is not installed (.ci/run installs it); skipping", what)
}

// runScript runs one conformance script and fails with its output when it fails.
func runScript(t *testing.T, s *twilioSetup, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	t.Logf("%s\n%s", strings.Join(append([]string{name}, args...), " "), out)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestTwilioHelperLibraries drives Twilio's own Go, Python and Node helper libraries
// against the Twilio Verify compatible API, each pointed at the public listener through
// the library's supported HTTP client hook.
func TestTwilioHelperLibraries(t *testing.T) {
	s := newTwilioSetup(t)

	t.Run("Go", func(t *testing.T) { twilioGoFlows(t, s) })
	t.Run("GoServices", func(t *testing.T) { twilioGoServiceFlows(t, s) })
	t.Run("GoAttempts", func(t *testing.T) { twilioGoAttemptFlows(t, s) })
	t.Run("GoTemplates", func(t *testing.T) { twilioGoTemplateFlows(t, s) })
	t.Run("GoTOTP", func(t *testing.T) { twilioGoTOTPFlows(t, s) })
	t.Run("GoPSD2", func(t *testing.T) { twilioGoPSD2Flows(t, s) })
	t.Run("GoRateLimits", func(t *testing.T) { twilioGoRateLimitFlows(t, s) })

	t.Run("Python", func(t *testing.T) {
		// Debian's python3-twilio lives in the system interpreter.
		for _, py := range []string{"/usr/bin/python3", "python3"} {
			if exec.Command(py, "-c", "import twilio").Run() == nil {
				runScript(t, s, py, filepath.Join("..", "..", "test", "twilio", "conformance.py"))
				return
			}
		}
		missing(t, "the Python library (Debian package python3-twilio)")
	})

	t.Run("Node", func(t *testing.T) {
		dir := filepath.Join("..", "..", "test", "twilio")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "twilio", "package.json")); err != nil {
			missing(t, "the Node library (npm package twilio in test/twilio/node_modules: make twilio-node)")
		}
		if _, err := exec.LookPath("node"); err != nil {
			missing(t, "node")
		}
		runScript(t, s, "node", filepath.Join(dir, "conformance.js"))
	})
}

// twilioGo is Twilio's Go library signed in with the setup's key and secret.
func twilioGo(t *testing.T, s *twilioSetup, secret string) *verify.ApiService {
	t.Helper()
	return servertest.TwilioGo(t, s.in.API, s.keyID, secret)
}

func twilioGoFlows(t *testing.T, s *twilioSetup) {
	v2 := twilioGo(t, s, s.secret)
	p1, p2, p3, p4 := servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone(), servertest.NewPhone()
	create := func(to string) (*verify.VerifyV2Verification, error) {
		return v2.CreateVerification(s.serviceSID, (&verify.CreateVerificationParams{}).SetTo(to).SetChannel("sms"))
	}
	checkTo := func(to, code string) (*verify.VerifyV2VerificationCheck, error) {
		return v2.CreateVerificationCheck(s.serviceSID, (&verify.CreateVerificationCheckParams{}).SetTo(to).SetCode(code))
	}

	v, err := create(p1)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if servertest.Str(v.Status) != "pending" || servertest.Str(v.To) != p1 || servertest.Str(v.Channel) != "sms" || !strings.HasPrefix(servertest.Str(v.Sid), "VE") ||
		servertest.Str(v.ServiceSid) != s.serviceSID || v.Valid == nil || *v.Valid || v.DateCreated == nil || v.SendCodeAttempts == nil || len(*v.SendCodeAttempts) != 1 {
		t.Fatalf("create: got %+v, want a pending sms verification of %s with one send attempt", v, p1)
	}
	code := servertest.LastCode(t, s.provider, p1)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	c, err := checkTo(p1, wrong)
	if err != nil || servertest.Str(c.Status) != "pending" || c.Valid == nil || *c.Valid {
		t.Errorf("check wrong code: got %+v, %v; want pending, valid false", c, err)
	}
	c, err = checkTo(p1, code)
	if err != nil || servertest.Str(c.Status) != "approved" || c.Valid == nil || !*c.Valid || servertest.Str(c.Sid) != servertest.Str(v.Sid) {
		t.Errorf("check right code: got %+v, %v; want approved, valid true", c, err)
	}
	f, err := v2.FetchVerification(s.serviceSID, servertest.Str(v.Sid))
	if err != nil || servertest.Str(f.Status) != "approved" || servertest.Str(f.Sid) != servertest.Str(v.Sid) {
		t.Errorf("fetch: got %+v, %v; want the approved verification", f, err)
	}

	other, err := create(p2)
	if err != nil {
		t.Fatalf("create another: %v", err)
	}
	canceled, err := v2.UpdateVerification(s.serviceSID, servertest.Str(other.Sid), (&verify.UpdateVerificationParams{}).SetStatus("canceled"))
	if err != nil || servertest.Str(canceled.Status) != "canceled" {
		t.Errorf("cancel: got %+v, %v; want canceled", canceled, err)
	}
	_, err = checkTo(p2, servertest.LastCode(t, s.provider, p2))
	servertest.WantTwilioError(t, "check of the canceled verification", err, 20404, 404)

	_, err = v2.CreateVerification("VA"+strings.Repeat("f", 32), (&verify.CreateVerificationParams{}).SetTo(p3).SetChannel("sms"))
	servertest.WantTwilioError(t, "unknown service", err, 20404, 404)
	_, err = twilioGo(t, s, s.secret[:len(s.secret)-1]+flip(s.secret[len(s.secret)-1])).CreateVerification(s.serviceSID,
		(&verify.CreateVerificationParams{}).SetTo(p3).SetChannel("sms"))
	servertest.WantTwilioError(t, "wrong secret", err, 20003, 401)
	_, err = create("+1")
	servertest.WantTwilioError(t, "bad To", err, 60200, 400)
	_, err = v2.CreateVerification(s.serviceSID, (&verify.CreateVerificationParams{}).SetTo(p3).SetChannel("sms").SetCustomCode("123456"))
	servertest.WantTwilioError(t, "CustomCode", err, 60200, 400)

	for i := 1; i <= 5; i++ {
		if v, err := create(p3); err != nil || servertest.Str(v.Status) != "pending" {
			t.Fatalf("send %d of 5: got %+v, %v; want pending", i, v, err)
		}
	}
	_, err = create(p3)
	servertest.WantTwilioError(t, "sixth send", err, 60203, 429)

	if _, err := create(p4); err != nil {
		t.Fatal(err)
	}
	bad := "000000"
	if servertest.LastCode(t, s.provider, p4) == bad {
		bad = "111111"
	}
	for i := 1; i <= 5; i++ {
		if c, err := checkTo(p4, bad); err != nil || c.Valid == nil || *c.Valid {
			t.Fatalf("wrong check %d of 5: got %+v, %v; want valid false", i, c, err)
		}
	}
	_, err = checkTo(p4, bad)
	servertest.WantTwilioError(t, "sixth wrong check", err, 60202, 429)
}

// flip changes one hex digit into another.
func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}
