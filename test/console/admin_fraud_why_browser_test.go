package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv/browser"
)

// TestAdminFraudWhyInBrowser opens the Fraud page in headless Chromium against a real server
// and reads why the guard acted: the why panel of a block names the signal and the figures
// that tripped it, and the recent challenges list the sends that were challenged and those
// a solved challenge admitted, each with its why.
func TestAdminFraudWhyInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	p := servertest.NewProvider(t)
	env := servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_GUARD": "enforce", "OTP_FRAUD_FLOOR_PREFIX": "5",
		"OTP_FRAUD_VOLUME_FLOOR": "3", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0", "OTP_CHALLENGE_COMPLEXITY": "1000",
	})
	in := servertest.Start(t, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", in.Stderr)
		}
	})
	// A new prefix's third send needs a challenge (its volume, none of which its baseline
	// explains); solved ones count, and the fifth unapproved send trips it.
	blocked := servertest.NewPrefix()
	for i := range 5 {
		ip := servertest.From(fmt.Sprintf("10.8.%d.1", i))
		r := servertest.Send(t, in, servertest.PrefixPhone(blocked, i), ip...)
		if strings.Contains(r.Raw, "floor") || strings.Contains(r.Raw, "baseline") {
			t.Errorf("the client's body names figures: %s", r.Raw)
		}
		switch {
		case i < 2:
			servertest.WantStatus(t, r, http.StatusCreated, "")
		case i < 4:
			servertest.WantStatus(t, r, http.StatusPreconditionRequired, "challenge_required")
			servertest.WantStatus(t, servertest.SendSolved(t, in, servertest.PrefixPhone(blocked, i), servertest.ChallengeOf(t, r), ip...), http.StatusCreated, "")
		default:
			servertest.WantStatus(t, r, http.StatusForbidden, "fraud_blocked")
		}
	}

	ctx := newAdminBrowser(t, chromium, env["ADMIN_TOKEN"])
	dir := browser.ArtifactDir(t)

	t.Run("TheBlocksWhyNamesTheFigures", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.Navigate(in.Admin+"/admin/fraud"),
			chromedp.WaitVisible(css(`table.blocks`)),
			chromedp.Click(css(`table.blocks details.why summary`)),
			chromedp.WaitVisible(css(`table.blocks details.why dl.why-figures`)),
		)
		why := browser.Read(t, ctx, chromedp.Text(css(`table.blocks details.why`)))
		saveArtifact(t, dir, "admin-fraud-why-block.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		for _, want := range []string{"why: tripped", "recent_unapproved", "prefix " + blocked,
			"5 unapproved sends in the recent horizon (floor 5)", "conversion 0 % against a baseline of 60 % × 0.3"} {
			if !strings.Contains(why, want) {
				t.Errorf("block's why: got %q, want %q", why, want)
			}
		}
	})

	t.Run("RecentChallengesSayWhy", func(t *testing.T) {
		browser.Do(t, ctx,
			chromedp.WaitVisible(css(`table.challenged`)),
			chromedp.Click(css(`table.challenged details.why-challenged summary`)),
			chromedp.WaitVisible(css(`table.challenged details.why-challenged dl.why-figures`)),
		)
		rows := browser.Read(t, ctx, chromedp.Text(css(`table.challenged`)))
		saveArtifact(t, dir, "admin-fraud-why-challenges.png", browser.Read(t, ctx, chromedp.FullScreenshot(100)))
		for _, want := range []string{servertest.PrefixPhone(blocked, 2), servertest.PrefixPhone(blocked, 3), "why: challenged (level 2) · volume",
			"4 recent sends where the baseline explains 0 (volume floor 3)", "why: passed (level 2) · volume"} {
			if !strings.Contains(rows, want) {
				t.Errorf("recent challenges: got %q, want %q", rows, want)
			}
		}
	})

	t.Run("TheAdminAPISaysTheSame", func(t *testing.T) {
		blocks := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/blocks", "")
		if !strings.Contains(blocks.Raw, `"why":{`) || !strings.Contains(blocks.Raw, `"signal":"recent_unapproved"`) {
			t.Errorf("blocks: got %s, want the why", blocks.Raw)
		}
		sends := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(servertest.PrefixPhone(blocked, 2)), "")
		if !strings.Contains(sends.Raw, `"action":"challenged"`) || !strings.Contains(sends.Raw, `"action":"passed"`) ||
			!strings.Contains(sends.Raw, `"volume_floor":3`) {
			t.Errorf("sends: got %s, want the challenge's why", sends.Raw)
		}
	})
}
