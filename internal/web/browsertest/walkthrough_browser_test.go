package browsertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"otpgate/internal/testenv/browser"
)

// TestDemoAsANewUserRunsIt is the README's walk-through in a browser: the binary with
// nothing set but its address (so that the token's issuer names the port it really
// listens on) and the admin token (which dev mode would draw and print), its demo page
// verifies a number, and a backend verifies the verified event's token against the JWKS
// with a stock JWT library (go-jose) and redeems it once with a key of the default app.
func TestDemoAsANewUserRunsIt(t *testing.T) {
	chromium := browser.Chromium(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const adminToken = "browser-test-admin-token-0123"
	srv := startDev(t, map[string]string{"OTP_HTTP_ADDR": addr, "ADMIN_TOKEN": adminToken})
	ctx := browser.New(t, chromium)

	browser.Do(t, ctx, chromedp.Navigate(srv.API+"/demo?lang=en&country=JP"))
	sendNumber(t, ctx, "090-1234-5678")
	waitCodeForm(t, ctx)
	enterCode(t, ctx, srv.code(t, "+819012345678", 1))
	waitMessage(t, ctx, "Verified.")
	verified := events(t, ctx, "verified")
	if len(verified) != 1 {
		t.Fatalf("got %d verified events, want one", len(verified))
	}
	token, _ := verified[0]["token"].(string)

	// The backend's side: the key set, then the token checked as docs/browser.md's Go
	// snippet does, pinned to the issuer dev mode names and the default app.
	_, port, _ := net.SplitHostPort(addr)
	const defaultApp = "00000000-0000-0000-0000-000000000001"
	claims, err := verifyWithJWKS(srv.API, token, "http://localhost:"+port, defaultApp)
	if err != nil {
		t.Fatalf("go-jose refused the demo page's token: %v", err)
	}
	if claims["address"] != "+819012345678" || claims["app"] != defaultApp || claims["channel"] != "sms" || claims["verification_id"] != verified[0]["id"] {
		t.Errorf("claims: got %v, want the number verified by sms for the default app", claims)
	}

	key := post(t, srv.Admin+"/admin/api/apps/default/keys", adminToken, nil)
	if key.status != http.StatusCreated && key.status != http.StatusOK {
		t.Fatalf("make a key of the default app: got %d %s", key.status, key.body)
	}
	var made struct{ Secret string }
	if err := json.Unmarshal(key.body, &made); err != nil || made.Secret == "" {
		t.Fatalf("key: got %s, want its secret", key.body)
	}
	redeem := func() reply {
		return post(t, srv.API+"/v1/apps/default/tokens/redeem", made.Secret, map[string]string{"token": token})
	}
	if r := redeem(); r.status != http.StatusOK {
		t.Errorf("redeem: got %d %s, want 200", r.status, r.body)
	}
	if r := redeem(); r.status != http.StatusConflict || !bytes.Contains(r.body, []byte(`"token_redeemed"`)) {
		t.Errorf("second redeem: got %d %s, want 409 token_redeemed", r.status, r.body)
	}
}

// TestOriginsInBrowser puts the component on pages of two origins other than the
// server's, one that the default app lists (OTP_ALLOWED_ORIGINS) and one it does not:
// the listed page verifies a number across origins; the unlisted page's send is stopped
// by Chromium at the preflight, which the server answered without any CORS header, so the
// page shows the sentence of no answer and no code is sent.
func TestOriginsInBrowser(t *testing.T) {
	chromium := browser.Chromium(t)
	listed, unlisted := httptest.NewServer(otherOriginPage()), httptest.NewServer(otherOriginPage())
	t.Cleanup(listed.Close)
	t.Cleanup(unlisted.Close)
	srv := startDev(t, map[string]string{
		"OTP_ALLOWED_ORIGINS": listed.URL, "OTP_LIMIT_IP": "1000/1h", "OTP_DUPLICATE_WINDOW": "0", "OTP_FRAUD_GUARD": "off",
	})
	ctx := browser.New(t, chromium)
	const route = "/v1/apps/{app}/verifications"

	t.Run("AListedOriginVerifies", func(t *testing.T) {
		browser.Do(t, ctx, chromedp.Navigate(listed.URL+"/?api="+srv.API))
		sendNumber(t, ctx, "090-7777-1111")
		waitCodeForm(t, ctx)
		enterCode(t, ctx, srv.code(t, "+819077771111", 1))
		waitMessage(t, ctx, "Verified.")
		if v := events(t, ctx, "verified"); len(v) != 1 || v[0]["token"] == "" {
			t.Errorf("verified: got %v, want one event with its token", v)
		}
	})

	t.Run("AnUnlistedOriginGetsNoCORSAnswer", func(t *testing.T) {
		before, preflights := srv.statuses(route), answeredPreflights(srv)
		browser.Do(t, ctx, chromedp.Navigate(unlisted.URL+"/?api="+srv.API))
		sendNumber(t, ctx, "090-7777-2222")
		m := waitMessage(t, ctx, "unavailable")
		if m.Text != "The service is unavailable. Try again later." || m.Code != "network" {
			t.Errorf("got %+v, want the sentence of no answer", m)
		}
		if p := events(t, ctx, "problem"); len(p) != 1 || p[0]["status"] != float64(0) {
			t.Errorf("problem events: got %v, want one with status 0 (no answer the page may read)", p)
		}
		// The server was asked (the preflight) and answered, but the send never came.
		if answeredPreflights(srv) <= preflights {
			t.Errorf("the server's log shows no preflight answered 204 for the unlisted page")
		}
		time.Sleep(500 * time.Millisecond)
		if after := srv.statuses(route); after[201] != before[201] || len(srv.codes("+819077772222")) != 0 {
			t.Errorf("sends answered %v before and %v after, codes %v; want no send from the unlisted origin", before, after, srv.codes("+819077772222"))
		}
	})
}

// answeredPreflights counts the preflights the server's log shows answered 204 (the
// CORS middleware answers them before routing, so their route is unmatched).
func answeredPreflights(s *devServer) int {
	return len(regexp.MustCompile(`msg=request method=OPTIONS route=\S+ status=204`).FindAllString(s.log(), -1))
}

// otherOriginPage is a page on an origin of its own that loads the component from the
// otpgate server named by its query's api and logs the component's events as the demo
// page does.
func otherOriginPage() http.Handler {
	page := template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>shop</title></head><body>
<otpgate-verify api="{{.}}" country="JP"></otpgate-verify>
<pre id="events"></pre>
<script src="{{.}}/otpgate-verify.js"></script>
<script>
  const events = document.getElementById("events");
  for (const type of ["sent", "problem", "verified"]) {
    document.querySelector("otpgate-verify").addEventListener(type, (e) => {
      events.textContent += type + " " + JSON.stringify(e.detail) + "\n";
    });
  }
</script>
</body></html>`))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, r.URL.Query().Get("api"))
	})
}

// verifyWithJWKS fetches the server's key set and checks a token with it as a backend
// does: the key the token names, ES256 or EdDSA, the issuer and the app as audience, now.
func verifyWithJWKS(api, raw, issuer, app string) (map[string]any, error) {
	res, err := http.Get(api + "/.well-known/jwks.json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		return nil, err
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		return nil, err
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		return nil, errors.New("the token's key is not published")
	}
	var std jwt.Claims
	var claims map[string]any
	if err := tok.Claims(keys[0].Key, &std, &claims); err != nil {
		return nil, err
	}
	return claims, std.ValidateWithLeeway(jwt.Expected{Issuer: issuer, AnyAudience: jwt.Audience{app}, Time: time.Now()}, 0)
}

// reply is an HTTP answer read whole.
type reply struct {
	status int
	body   []byte
}

// post sends body as JSON (none when nil) with bearer as the Authorization.
func post(t *testing.T, url, bearer string, body any) reply {
	t.Helper()
	var in io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(http.MethodPost, url, in)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, b}
}
