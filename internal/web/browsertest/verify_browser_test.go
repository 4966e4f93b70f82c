package browsertest

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/testenv"
	"otpgate/internal/testenv/browser"
)

// TestVerifyInBrowser drives the demo page of a dev-mode server: a number verified end to
// end with the code read from the log, a wrong code, a 429, the resend countdown, an email
// address, the keyboard alone, the page's theme, a call, and the code filled in by WebOTP.
// The server's limits are the defaults but for the phone's minute rule, shortened to 8
// seconds so that the countdown can be waited out, and the IP's, raised because every send
// comes from loopback.
func TestVerifyInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	srv := startDev(t, map[string]string{
		"OTP_LIMIT_PHONE": "1/8s,10/1h", "OTP_LIMIT_IP": "1000/1h", "OTP_DUPLICATE_WINDOW": "0",
		// Many numbers from one address that seldom approve look like pumping; the guard's
		// own browser test is TestChallengeInBrowser.
		"OTP_FRAUD_GUARD": "off",
	})
	ctx := browser.New(t, chromium)
	dir := browser.ArtifactDir(t)
	page := srv.API + "/demo?lang=en&country=JP"

	t.Run("VerifiesANumberEndToEnd", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page))
		sendNumber(t, ctx, "090-1111-2222")
		waitCodeForm(t, ctx)
		sentTo := browser.Read(t, ctx, chromedp.Evaluate[string](string(shadow(".sent-to"))+`.textContent`))
		if sentTo != "We sent a code to +81 90 1111 2222." {
			t.Errorf("got %q, want the number as its country writes it", sentTo)
		}
		browser.Screenshot(t, ctx, dir, "component-code.png")
		enterCode(t, ctx, srv.code(t, "+819011112222", 1))
		m := waitMessage(t, ctx, "Verified.")
		if m.Live != "polite" {
			t.Errorf("live region: got aria-live %q, want polite", m.Live)
		}
		browser.Screenshot(t, ctx, dir, "component-verified.png")
		sent, verified := events(t, ctx, "sent"), events(t, ctx, "verified")
		if len(sent) != 1 || len(verified) != 1 {
			t.Fatalf("got %d sent and %d verified events, want one of each", len(sent), len(verified))
		}
		v := verified[0]
		if v["id"] != sent[0]["id"] || v["phone"] != "+819011112222" || v["status"] != "approved" {
			t.Errorf("verified: got %v, want the sent verification (%v) approved", v, sent[0]["id"])
		}
		// The event carries the check answer's signed token, which the page hands its backend.
		if tok, _ := v["token"].(string); len(strings.Split(tok, ".")) != 3 {
			t.Errorf("token: got %q, want a compact JWT", v["token"])
		}
	})

	t.Run("WrongCodeShowsItsSentenceInThePagesLanguage", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=ja&country=JP"))
		sendNumber(t, ctx, "09022223333")
		waitCodeForm(t, ctx)
		code := srv.code(t, "+819022223333", 1)
		enterCode(t, ctx, wrong(code))
		m := waitMessage(t, ctx, "コードが違います")
		if m.Text != "コードが違います。残りの試行回数: 4。" || m.Code != "invalid_code" {
			t.Errorf("got %+v, want the Japanese sentence of invalid_code with 4 attempts left", m)
		}
		invalid := browser.Read(t, ctx, chromedp.Evaluate[string](string(shadow("#code"))+`.getAttribute("aria-invalid")`))
		if invalid != "true" {
			t.Errorf("code field: got aria-invalid %q, want true", invalid)
		}
		enterCode(t, ctx, code)
		waitMessage(t, ctx, "確認が完了しました。")
	})

	t.Run("ResendCountdownMatchesNextResendAt", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page))
		sendNumber(t, ctx, "09033334444")
		waitCodeForm(t, ctx)
		next := events(t, ctx, "sent")[0]["next_resend_at"].(string)
		type state struct {
			Text     string  `json:"text"`
			Left     float64 `json:"left"`
			Disabled bool    `json:"disabled"`
		}
		// The button ticks once a second: on a loaded machine one reading may fall between a
		// tick that is late and the next, so a few readings are taken and one must agree.
		var s state
		var shown float64
		for try := 0; try < 5; try++ {
			s = browser.Read(t, ctx, chromedp.Evaluate[state](`({text: `+string(shadow("button.resend"))+`.textContent,
				left: (Date.parse(`+strconv.Quote(next)+`) - Date.now()) / 1000, disabled: `+string(shadow("button.resend"))+`.disabled})`))
			m := regexp.MustCompile(`^Resend code in (\d+):(\d\d)$`).FindStringSubmatch(s.Text)
			if m == nil || !s.Disabled {
				t.Fatalf("got %+v, want a disabled button counting down", s)
			}
			mins, _ := strconv.Atoi(m[1])
			secs, _ := strconv.Atoi(m[2])
			if shown = float64(mins*60 + secs); shown >= s.Left-1 && shown <= s.Left+1 && s.Left >= 1 {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		if shown < s.Left-1 || shown > s.Left+1 || s.Left < 1 {
			t.Errorf("countdown shows %s (%vs), want the %.1fs left until next_resend_at %s", s.Text, shown, s.Left, next)
		}
		// Once next_resend_at has passed, and not before, the button resends.
		browser.Do(t, ctx, chromedp.Poll[chromedp.Void](`!`+string(shadow("button.resend"))+`.disabled`, chromedp.WithPollingTimeout(20*time.Second)))
		early := browser.Read(t, ctx, chromedp.Evaluate[float64](`Date.parse(`+strconv.Quote(next)+`) - Date.now()`))
		if text := browser.Read(t, ctx, chromedp.Evaluate[string](string(shadow("button.resend"))+`.textContent`)); text != "Resend code" || early > 0 {
			t.Errorf("got %q enabled %.0fms before next_resend_at, want Resend code once it passed", text, early)
		}
		browser.Do(t, ctx, chromedp.Click(shadow("button.resend")))
		second := srv.code(t, "+819033334444", 2)
		browser.Do(t, ctx, chromedp.Poll[chromedp.Void](`document.getElementById("events").textContent.split("\n").filter((l) => l.startsWith("sent ")).length === 2`,
			chromedp.WithPollingTimeout(10*time.Second)))
		if resent := events(t, ctx, "sent"); resent[1]["id"] != resent[0]["id"] {
			t.Errorf("the resend answered %v, want the same verification as %v", resent[1], resent[0])
		}
		enterCode(t, ctx, second)
		waitMessage(t, ctx, "Verified.")
	})

	t.Run("RateLimitedShowsItsSentence", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page))
		sendNumber(t, ctx, "09044445555")
		waitCodeForm(t, ctx)
		// Back to the number and send again at once: the phone's rule refuses.
		browser.Do(t, ctx, chromedp.Click(shadow("button.change")), chromedp.Click(shadow("button.send")))
		m := waitMessage(t, ctx, "Too many requests")
		if !regexp.MustCompile(`^Too many requests\. Try again in 0:0[1-8]\.$`).MatchString(m.Text) || m.Code != "rate_limited" {
			t.Errorf("got %+v, want rate_limited's sentence with the phone rule's wait", m)
		}
		browser.Screenshot(t, ctx, dir, "component-rate-limited.png")
	})

	t.Run("EmailWhereTheAppAcceptsIt", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page+"&channels=sms,email"),
			chromedp.Click(shadow(`input[name="channel"][value="email"]`)),
			chromedp.WaitVisible(shadow("#email")),
			chromedp.SendKeys(shadow("#email"), "Ana@Example.COM"),
			chromedp.Click(shadow("button.send")),
		)
		waitCodeForm(t, ctx)
		if sentTo := browser.Read(t, ctx, chromedp.Evaluate[string](string(shadow(".sent-to"))+`.textContent`)); sentTo != "We sent a code to Ana@example.com." {
			t.Errorf("got %q, want the address as the server keeps it", sentTo)
		}
		enterCode(t, ctx, srv.code(t, "Ana@example.com", 1))
		waitMessage(t, ctx, "Verified.")
		verified := events(t, ctx, "verified")
		if len(verified) != 1 || verified[0]["email"] != "Ana@example.com" || verified[0]["status"] != "approved" {
			t.Errorf("verified: got %v, want the address approved", verified)
		}
	})

	t.Run("KeyboardOnly", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=en&country=JP&channels=sms"))
		focused := `document.activeElement && document.activeElement.shadowRoot && document.activeElement.shadowRoot.activeElement ? document.activeElement.shadowRoot.activeElement.id : ""`
		for i := 0; ; i++ {
			if i == 10 {
				t.Fatal("Tab never reached the phone field")
			}
			browser.Do(t, ctx, chromedp.KeyEvent(kb.Tab))
			if browser.Read(t, ctx, chromedp.Evaluate[string](focused)) == "phone" {
				break
			}
		}
		browser.Do(t, ctx, chromedp.KeyEvent("09055556666"), chromedp.KeyEvent(kb.Enter))
		waitCodeForm(t, ctx)
		if got := browser.Read(t, ctx, chromedp.Evaluate[string](focused)); got != "code" {
			t.Errorf("after the send, focus is on %q, want the code field", got)
		}
		browser.Do(t, ctx, chromedp.KeyEvent(srv.code(t, "+819055556666", 1)), chromedp.KeyEvent(kb.Enter))
		waitMessage(t, ctx, "Verified.")
		if got := browser.Read(t, ctx, chromedp.Evaluate[string](focused)); got != "message" {
			t.Errorf("after the check, focus is on %q, want the message", got)
		}
	})

	t.Run("ThemedThroughCSSPartsAndProperties", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page), chromedp.Evaluate[chromedp.Void](`const style = document.createElement("style");
			style.textContent = "otpgate-verify { --otpgate-accent: rgb(1, 2, 3); } otpgate-verify::part(input phone) { color: rgb(4, 5, 6); }";
			document.head.append(style)`))
		type look struct{ SendBackground, SendWeight, ChangeWeight, PhoneColor string }
		got := browser.Read(t, ctx, chromedp.Evaluate[look](`({
			SendBackground: getComputedStyle(`+string(shadow("button.send"))+`).backgroundColor,
			SendWeight: getComputedStyle(`+string(shadow("button.send"))+`).fontWeight,
			ChangeWeight: getComputedStyle(`+string(shadow("button.change"))+`).fontWeight,
			PhoneColor: getComputedStyle(`+string(shadow("#phone"))+`).color})`))
		// The demo page's own rule, ::part(button send), makes the send button bold and not
		// the change button.
		if want := (look{"rgb(1, 2, 3)", "600", "400", "rgb(4, 5, 6)"}); got != want {
			t.Errorf("got %+v, want %+v: the accent property and the parts styled from the page", got, want)
		}
	})

	t.Run("VoiceWhereTheAppAcceptsIt", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(page+"&channels=sms,voice"),
			chromedp.Click(shadow(`input[name="channel"][value="voice"]`)))
		sendNumber(t, ctx, "09077778888")
		waitCodeForm(t, ctx)
		if sent := events(t, ctx, "sent"); len(sent) != 1 || sent[0]["channel"] != "voice" {
			t.Fatalf("sent: got %v, want one send by voice", sent)
		}
		enterCode(t, ctx, srv.code(t, "+819077778888", 1))
		waitMessage(t, ctx, "Verified.")
	})

	t.Run("WebOTPFillsTheCodeFromTheSMS", func(t *testing.T) {
		// Headless Chromium has no SMS to read: the WebOTP API is played by a stand-in,
		// put in before the page's scripts, that answers when the test hands it the code.
		var added cdppage.AddScriptToEvaluateOnNewDocumentResult
		browser.Do(t, ctx, chromedp.Func(func(ctx context.Context, tab *chromedp.Target) (err error) {
			added, err = cdp.Call(ctx, tab, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: `
				window.OTPCredential = function OTPCredential() {};
				window.webotp = {asked: ""};
				navigator.credentials.get = (options) => new Promise((resolve) => {
					window.webotp = {asked: JSON.stringify(options.otp), resolve};
				});`})
			return err
		}))
		t.Cleanup(func() {
			browser.Do(t, ctx, chromedp.Func(func(ctx context.Context, tab *chromedp.Target) error {
				_, err := cdp.Call(ctx, tab, cdppage.RemoveScriptToEvaluateOnNewDocument, cdppage.RemoveScriptToEvaluateOnNewDocumentParams(added))
				return err
			}))
		})
		browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=en&country=JP&channels=sms&webotp"))
		if ac := browser.Read(t, ctx, chromedp.Evaluate[string](string(shadow("#code"))+`.autocomplete`)); ac != "one-time-code" {
			t.Errorf("code field: got autocomplete %q, want one-time-code", ac)
		}
		sendNumber(t, ctx, "09088889999")
		waitCodeForm(t, ctx)
		browser.Do(t, ctx, chromedp.Poll[chromedp.Void](`window.webotp.asked !== ""`, chromedp.WithPollingTimeout(10*time.Second)))
		if asked := browser.Read(t, ctx, chromedp.Evaluate[string](`window.webotp.asked`)); asked != `{"transport":["sms"]}` {
			t.Errorf("the component asked WebOTP for %s, want the SMS transport", asked)
		}
		code := srv.code(t, "+819088889999", 1)
		browser.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.webotp.resolve({code: `+strconv.Quote(code)+`})`))
		waitMessage(t, ctx, "Verified.")
		if v := events(t, ctx, "verified"); len(v) != 1 || v[0]["phone"] != "+819088889999" {
			t.Errorf("verified: got %v, want the number approved with the code WebOTP gave", v)
		}
	})
}

// TestChallengeInBrowser drives the demo page against a dev-mode server whose fraud guard
// challenges every send to a country without approved history (the young countries' pool
// with a floor of one): the component solves the 428's proof of work and the send goes
// through, the test never touching the challenge. The same server's codes live two
// seconds, for the expired code's sentence.
func TestChallengeInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	srv := startDev(t, map[string]string{
		"OTP_LIMIT_IP": "1000/1h", "OTP_FRAUD_GUARD": "enforce", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "1",
		"OTP_CODE_TTL": "2s",
	})
	ctx := browser.New(t, chromium)
	const route = "/v1/apps/{app}/verifications"

	t.Run("AChallengedSendIsSolvedAndGoesThrough", func(t *testing.T) {
		num := phonenumbers.GetExampleNumberForType("UZ", phonenumbers.MOBILE)
		e164 := phonenumbers.Format(num, phonenumbers.E164)
		browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=en&country=UZ"))
		// Record what the page shows while the worker searches: the progress bar and the
		// live region's words.
		browser.Do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.seen = [];
			new MutationObserver(() => {
				const bar = `+string(shadow("progress"))+`;
				if (!bar.hidden) window.seen.push(bar.value + " " + `+string(shadow("#message"))+`.textContent);
			}).observe(document.querySelector("otpgate-verify").shadowRoot, {subtree: true, attributes: true, childList: true, characterData: true})`))
		sendNumber(t, ctx, phonenumbers.Format(num, phonenumbers.NATIONAL))
		waitCodeForm(t, ctx)
		seen := browser.Read(t, ctx, chromedp.Evaluate[[]string](`window.seen`))
		// The number that solves the challenge is drawn at random, so the worker may find it
		// before its first progress report: the bar and the words must show, the count need
		// not have moved.
		if len(seen) < 1 || !strings.Contains(seen[len(seen)-1], "Security check…") {
			t.Errorf("while solving the page showed %q, want the progress bar and the live region's words", seen)
		}
		srv.code(t, e164, 1)
		if got := srv.statuses(route); got[428] < 1 || got[201] != 1 {
			t.Errorf("sends answered %v, want a 428 and then the solved send's 201", got)
		}
		if p := events(t, ctx, "problem"); len(p) != 0 {
			t.Errorf("the page was told of problems %v, want the challenge solved unseen", p)
		}
	})

	t.Run("ExpiredCodeShowsItsSentence", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=en&country=JP"))
		sendNumber(t, ctx, "09066667777")
		waitCodeForm(t, ctx)
		code := srv.code(t, "+819066667777", 1)
		sent := events(t, ctx, "sent")
		expires, err := time.Parse(time.RFC3339, sent[len(sent)-1]["expires_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(expires) + 1100*time.Millisecond)
		enterCode(t, ctx, code)
		m := waitMessage(t, ctx, "expired")
		if m.Text != "This code has expired. Send a new code." || m.Code != "expired" {
			t.Errorf("got %+v, want expired's sentence", m)
		}
	})
}

// TestDemoIsDevModes starts the binary in production mode: it serves the component's script
// but no demo page, which answers 404 as any unknown path does.
func TestDemoIsDevModes(t *testing.T) {
	srv := startDev(t, map[string]string{
		"REDIS_URL": testenv.RedisURL(t), "DATABASE_URL": testenv.PostgresDSN(t), "OTP_REDIS_PREFIX": testenv.KeyPrefix(t),
		"OTP_SECRET": "browser-test-secret-0123456789abcdef", "ADMIN_TOKEN": "browser-test-admin-token-0123", "SMS_PROVIDER": "log",
	})
	for path, want := range map[string]int{"/demo": http.StatusNotFound, "/otpgate-verify.js": http.StatusOK} {
		res, err := http.Get(srv.API + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: got %d, want %d", path, res.StatusCode, want)
		}
	}
}
