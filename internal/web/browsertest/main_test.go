// Package browsertest drives the <otpgate-verify> web component on the demo page in
// headless Chromium against a real dev-mode server, the binary as a user runs it, and reads
// the codes from its log as that user would.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"otpgate/internal/testenv"
	"otpgate/internal/testenv/browser"
	"otpgate/internal/testenv/fixture"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// devServer is a dev-mode server process and its log.
type devServer struct {
	*fixture.Server
	logPath string
}

// startDev runs the server binary with env as its whole environment, in dev mode unless env
// names REDIS_URL and DATABASE_URL, and stops it at cleanup.
func startDev(t *testing.T, env map[string]string) *devServer {
	t.Helper()
	s := &devServer{logPath: filepath.Join(t.TempDir(), "server.log")}
	logf, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s.Server, err = fixture.StartServer(ctx, testenv.ServerBinary(t), env, logf)
	if err != nil {
		t.Fatalf("start dev server: %v\n%s", err, s.log())
	}
	t.Cleanup(func() {
		if err := s.Stop(30 * time.Second); err != nil {
			t.Errorf("stop dev server: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.log())
		}
	})
	return s
}

func (s *devServer) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// codeLine finds what the dev mode's log sender prints for each SMS or email: its address
// and the message, whose first run of digits is the code. voiceLine finds a call's, whose
// digits are read one by one, with the locale's separator between them.
var (
	codeLine  = regexp.MustCompile(`msg="(?:sms|email) not sent: log sender".* to=(\S+) .*body="\D*(\d{4,10})`)
	voiceLine = regexp.MustCompile(`msg="voice not sent: log sender".* to=(\S+) .*body="?\D*(\d(?:(?:、|, | )\d){3,9})`)
)

// codes are the codes the server's log shows sent to an address, oldest first.
func (s *devServer) codes(to string) []string {
	var out []string
	for _, line := range strings.Split(s.log(), "\n") {
		if m := codeLine.FindStringSubmatch(line); m != nil && m[1] == to {
			out = append(out, m[2])
		} else if m := voiceLine.FindStringSubmatch(line); m != nil && m[1] == to {
			out = append(out, regexp.MustCompile(`\D`).ReplaceAllString(m[2], ""))
		}
	}
	return out
}

// code waits for the nth code (1 for the first) sent to an address to appear in the log.
func (s *devServer) code(t *testing.T, to string, nth int) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c := s.codes(to); len(c) >= nth {
			return c[nth-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no code #%d for %s in the log", nth, to)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// statuses counts the log's access lines of a route by status.
func (s *devServer) statuses(route string) map[int]int {
	re := regexp.MustCompile(`msg=request method=POST route=` + regexp.QuoteMeta(route) + ` status=(\d+)`)
	out := map[int]int{}
	for _, m := range re.FindAllStringSubmatch(s.log(), -1) {
		n, _ := strconv.Atoi(m[1])
		out[n]++
	}
	return out
}

// shadow is a JavaScript expression for the element sel in the component's shadow root.
func shadow(sel string) chromedp.JSPath {
	return chromedp.JSPath(`document.querySelector("otpgate-verify").shadowRoot.querySelector(` + strconv.Quote(sel) + `)`)
}

// message is what the component's live region says now, and the problem code it shows.
type message struct {
	Text string `json:"text"`
	Code string `json:"code"`
	Live string `json:"live"`
}

func readMessage(t *testing.T, ctx context.Context) message {
	t.Helper()
	m := string(shadow("#message"))
	return browser.Read(t, ctx, chromedp.Evaluate[message](`({text: `+m+`.textContent, code: `+m+`.dataset.code, live: `+m+`.getAttribute("aria-live")})`))
}

// waitMessage waits until the live region says something that has want in it.
func waitMessage(t *testing.T, ctx context.Context, want string) message {
	t.Helper()
	browser.Do(t, ctx, chromedp.Poll[chromedp.Void](string(shadow("#message"))+`.textContent.includes(`+strconv.Quote(want)+`)`, chromedp.WithPollingTimeout(20*time.Second)))
	return readMessage(t, ctx)
}

// waitCodeForm waits until the component asks for the code.
func waitCodeForm(t *testing.T, ctx context.Context) {
	t.Helper()
	browser.Do(t, ctx, chromedp.Poll[chromedp.Void](`!`+string(shadow("form.check"))+`.hidden`, chromedp.WithPollingTimeout(30*time.Second)))
}

// events are the component's events the demo page logged, by type.
func events(t *testing.T, ctx context.Context, typ string) []map[string]any {
	t.Helper()
	return browser.Read(t, ctx, chromedp.Evaluate[[]map[string]any](`document.getElementById("events").textContent.split("\n")
		.filter((l) => l.startsWith(`+strconv.Quote(typ+" ")+`)).map((l) => JSON.parse(l.slice(`+strconv.Itoa(len(typ)+1)+`)))`))
}

// sendNumber types a national number into the phone field and presses the send button.
func sendNumber(t *testing.T, ctx context.Context, national string) {
	t.Helper()
	browser.Do(t, ctx,
		chromedp.SendKeys(shadow("#phone"), national),
		chromedp.Click(shadow("button.send")),
	)
}

// enterCode types a code and presses the verify button.
func enterCode(t *testing.T, ctx context.Context, code string) {
	t.Helper()
	browser.Do(t, ctx,
		chromedp.SetValue(shadow("#code"), ""),
		chromedp.SendKeys(shadow("#code"), code),
		chromedp.Click(shadow("button.verify")),
	)
}

// wrong is a code that is not c.
func wrong(c string) string {
	if strings.HasPrefix(c, "0") {
		return "1" + c[1:]
	}
	return "0" + c[1:]
}
