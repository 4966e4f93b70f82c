package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	"otpgate/client/admin"
	"otpgate/internal/server/servertest"
)

// state is what the fuzzer reads around a request: the limiter's counts for the client IP
// and the phone, the time of the newest history row, and how many messages went out.
type state struct {
	used     map[string]int // "<target> <scope> <rule>" → requests counted
	newestAt time.Time
	messages int
}

// snapshot reads the state through the admin API, for the IP and (when known) the phone.
func (f *fuzzer) snapshot(rt *rapid.T, ip, phone string) state {
	ctx := context.Background()
	s := state{used: map[string]int{}}
	targets := []admin.GetLimitsParams{{Ip: &ip}}
	if phone != "" {
		targets = append(targets, admin.GetLimitsParams{Phone: &phone})
	}
	for _, p := range targets {
		resp, err := f.admin.GetLimitsWithResponse(ctx, &p)
		if err != nil || resp.JSON200 == nil {
			rt.Fatalf("admin limits: %v (%s)", err, bodyOf(resp))
		}
		for _, r := range resp.JSON200.Rules {
			s.used[resp.JSON200.Target+" "+r.Scope+" "+r.Rule] = r.Used
		}
	}
	limit := 1
	sends, err := f.admin.ListSendsWithResponse(ctx, &admin.ListSendsParams{Limit: &limit})
	if err != nil || sends.JSON200 == nil {
		rt.Fatalf("admin sends: %v", err)
	}
	if len(sends.JSON200.Sends) > 0 {
		s.newestAt = sends.JSON200.Sends[0].Time
	}
	s.messages = f.out.count()
	return s
}

// adminState reads what an admin request may change, as the admin API shows it: the apps,
// the fraud lists and settings and the newest history rows.
func (f *fuzzer) adminState(rt *rapid.T) string {
	var b strings.Builder
	for _, p := range []string{"/admin/api/apps", "/admin/api/fraud/lists", "/admin/api/fraud/config", "/admin/api/sends?limit=5"} {
		req, _ := http.NewRequest(http.MethodGet, f.in.Admin+p, nil)
		req.Header.Set("Authorization", "Bearer "+fuzzAdminToken)
		resp, err := f.http.Do(req)
		if err != nil {
			rt.Fatalf("GET %s: %v", p, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			rt.Fatalf("GET %s: %d %s", p, resp.StatusCode, body)
		}
		b.WriteString(p + " " + string(body) + "\n")
	}
	return b.String()
}

func bodyOf(r *admin.GetLimitsResponse) string {
	if r == nil {
		return ""
	}
	return string(r.Body)
}

// spentSince names a rule that counted more requests than in before, "" when none did.
// Entries that left their window meanwhile only lower the counts.
func (s state) spentSince(before state) string {
	for k, n := range s.used {
		if n > before.used[k] {
			return fmt.Sprintf("%s (%d, was %d)", k, n, before.used[k])
		}
	}
	return ""
}

// logSenderLine marks a message (of any channel) the dev-mode log sender printed instead of sending.
const logSenderLine = " not sent: log sender"

// codeLine finds the recipient and the code of a log sender line.
var codeLine = regexp.MustCompile(`to=(\+\d+) .*?body="[^"]*?(\d{6})`)

// loggedCode is the code of the newest message to e164 that the log sender printed, or "".
func loggedCode(in *servertest.Instance, e164 string) string {
	var latest string
	for _, l := range in.Stderr.Lines(logSenderLine) {
		if m := codeLine.FindStringSubmatch(l); m != nil && m[1] == e164 {
			latest = m[2]
		}
	}
	return latest
}

// code generates the latest code sent to e164, or a random one.
func (f *fuzzer) code(e164 string) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		latest := f.out.lastCode(e164)
		if latest != "" && rapid.IntRange(0, 2).Draw(t, "sent code") > 0 {
			return latest
		}
		return rapid.StringMatching(`[0-9]{6}`).Draw(t, "code")
	})
}

// verificationID generates e164's latest verification id, another one, or "".
func (f *fuzzer) verificationID(e164 string) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		choices := []string{"", uuid.NewString(), strings.ToUpper(uuid.NewString())}
		if id := f.ids[e164]; id != "" {
			choices = append(choices, id, id, strings.ToUpper(id))
		}
		return rapid.SampledFrom(choices).Draw(t, "id")
	})
}

// knownSendID generates the id of a recent send, or a random UUID when there is none.
func (f *fuzzer) knownSendID() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		limit := 20
		resp, err := f.admin.ListSendsWithResponse(context.Background(), &admin.ListSendsParams{Limit: &limit})
		if err != nil || resp.JSON200 == nil || len(resp.JSON200.Sends) == 0 {
			// rapid wants every generator to draw something, even when there is no choice.
			_ = rapid.Bool().Draw(t, "no send yet")
			return uuid.NewString()
		}
		return rapid.SampledFrom(resp.JSON200.Sends).Draw(t, "send").Id.String()
	})
}

// phoneSpelling generates a pool number in one of its spellings, or an invalid number.
func (f *fuzzer) phoneSpelling() *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		if rapid.IntRange(0, 9).Draw(t, "invalid phone") == 0 {
			return rapid.SampledFrom([]string{"+81 12", "not a phone", "+999123", "0", " ", "+1 415 555 267１x"}).Draw(t, "phone")
		}
		e164 := rapid.SampledFrom(f.phones).Draw(t, "phone")
		return rapid.SampledFrom(append(spellings[e164], e164)).Draw(t, "spelling")
	})
}

// idempotencyKey generates keys from a small pool, so that some repeat (with the same
// body, a replay; with another, a reuse) and others are new.
func (f *fuzzer) idempotencyKey() *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		if rapid.Bool().Draw(t, "fresh key") {
			return "key-" + uuid.NewString()
		}
		return rapid.SampledFrom([]string{"order-1", "order-2", "order-3"}).Draw(t, "key")
	})
}

// learn keeps the verification id of a successful send.
func (f *fuzzer) learn(resp *http.Response, body []byte) {
	if resp.StatusCode/100 != 2 {
		return
	}
	var v struct {
		ID     string `json:"id"`
		Phone  string `json:"phone"`
		Status string `json:"status"`
	}
	if json.Unmarshal(body, &v) == nil && v.Status == "pending" {
		f.ids[v.Phone] = v.ID
	}
}

func sortStrings(s []string) { sort.Strings(s) }
