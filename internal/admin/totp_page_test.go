package admin

import (
	"bytes"
	"encoding/base64"
	"html"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	pqotp "github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"

	"otpgate/internal/apps"
	"otpgate/internal/operators"
	"otpgate/internal/totp"
)

// totpConsole is the full admin listener with one app, and a way to post its forms as a
// browser does (the console's password and its CSRF token).
type totpConsole struct {
	*fullEnv
	appID string
	form  func(t *testing.T, path string, values url.Values) *httptest.ResponseRecorder
}

func newTOTPConsole(t *testing.T) *totpConsole {
	t.Helper()
	e := newFullEnv(t)
	name := "Acme TOTP"
	info, err := e.deps.Apps.CreateApp(t.Context(), apps.Patch{Name: &name}, "test")
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	cookie, token := e.csrfSession(t)
	return &totpConsole{fullEnv: e, appID: info.App.ID, form: func(t *testing.T, path string, values url.Values) *httptest.ResponseRecorder {
		t.Helper()
		values.Set(csrfField, token)
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(values.Encode()))
		r.Header.Set("Authorization", basic("support", testAdminToken))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(cookie)
		return serve(e.h, r)
	}}
}

// factors lists every factor of the app, through the service the page uses.
func (c *totpConsole) factors(t *testing.T) []totp.Factor {
	t.Helper()
	entities, err := c.deps.TOTP.Entities(t.Context(), c.appID)
	if err != nil {
		t.Fatal(err)
	}
	var out []totp.Factor
	for _, e := range entities {
		list, err := c.deps.TOTP.Factors(t.Context(), c.appID, e.Identity)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, list...)
	}
	return out
}

// pqCode is the code of uri at now made by pquerna/otp, which shares no code with otpgate.
func pqCode(t *testing.T, uri string, now time.Time) string {
	t.Helper()
	key, err := pqotp.NewKeyFromURL(uri)
	if err != nil {
		t.Fatalf("pquerna/otp reads %s: %v", uri, err)
	}
	code, err := pqtotp.GenerateCodeCustom(key.Secret(), now, pqtotp.ValidateOpts{Period: uint(key.Period()), Digits: key.Digits(), Algorithm: pqotp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

var (
	qrImg    = regexp.MustCompile(`<img id="totp-qr" src="data:image/png;base64,([^"]+)"`)
	uriSpan  = regexp.MustCompile(`<span class="mono secret" id="totp-uri">([^<]+)</span>`)
	secretEl = regexp.MustCompile(`<span class="mono secret" id="totp-secret">([A-Z2-7]+)</span>`)
)

func TestTOTPConsolePage(t *testing.T) {
	t.Run("EnrolsShowsTheQRCodeOnceAndVerifiesTheFirstCode", func(t *testing.T) {
		c := newTOTPConsole(t)
		if body := c.page(t, "/admin/apps/"+c.appID, http.StatusOK); !strings.Contains(body, `href="/admin/apps/`+c.appID+`/totp"`) {
			t.Errorf("the app's page does not link its TOTP page")
		}
		w := c.form(t, "/admin/apps/"+c.appID+"/totp", url.Values{"identity": {"user-0001"}, "friendly_name": {"Work phone"}})
		if w.Code != http.StatusCreated {
			t.Fatalf("enrol: got %d %s", w.Code, w.Body)
		}
		if got := w.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", got)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data:") {
			t.Errorf("CSP %q does not let the page show a data: image", csp)
		}
		body := w.Body.String()
		qr, um, sm := qrImg.FindStringSubmatch(body), uriSpan.FindStringSubmatch(body), secretEl.FindStringSubmatch(body)
		if qr == nil || um == nil || sm == nil {
			t.Fatalf("the answer lacks the QR image, the URI or the secret: %s", body)
		}
		uri, secret := html.UnescapeString(um[1]), sm[1]
		if u, err := url.Parse(uri); err != nil || u.Scheme != "otpauth" || u.Query().Get("secret") != secret || !strings.Contains(u.Path, "Work phone") {
			t.Errorf("URI %q does not hold the secret %s and the name (%v)", uri, secret, err)
		}
		raw, err := base64.StdEncoding.DecodeString(html.UnescapeString(qr[1]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
			t.Errorf("the QR image is no PNG: %v", err)
		}
		// totp.QRPNG is held to drawing its URI's very modules in internal/totp: the
		// image is that drawing of the URI shown.
		if want, err := totp.QRPNG(uri); err != nil || !bytes.Equal(raw, want) {
			t.Errorf("the QR image is not the URI's QR code (%v)", err)
		}
		facs := c.factors(t)
		if len(facs) != 1 || facs[0].Status != totp.FactorUnverified || facs[0].Identity != "user-0001" {
			t.Fatalf("factors %+v, want one unverified factor of user-0001", facs)
		}

		list := c.page(t, "/admin/apps/"+c.appID+"/totp", http.StatusOK)
		for _, want := range []string{facs[0].ID, "user-0001", "Work phone", "unverified"} {
			if !strings.Contains(list, want) {
				t.Errorf("the page does not list %q", want)
			}
		}
		if strings.Contains(list, secret) || strings.Contains(list, "data:image/png") {
			t.Errorf("the page shows the secret again")
		}

		code := pqCode(t, uri, time.Now())
		w = c.form(t, "/admin/apps/"+c.appID+"/totp/verify", url.Values{"identity": {"user-0001"}, "factor": {facs[0].ID}, "code": {code}})
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/admin/apps/"+c.appID+"/totp?verified="+facs[0].ID {
			t.Fatalf("verify: got %d %s, Location %q", w.Code, w.Body, w.Header().Get("Location"))
		}
		if facs = c.factors(t); facs[0].Status != totp.FactorVerified {
			t.Errorf("factor is %s after its first code, want verified", facs[0].Status)
		}
		if list := c.page(t, w.Header().Get("Location"), http.StatusOK); !strings.Contains(list, `<td data-label="Status" class="factor-status">verified</td>`) {
			t.Errorf("the page does not show the factor verified")
		}
		if logs := c.logs.String(); strings.Contains(logs, secret) || strings.Contains(logs, "code="+code) || strings.Contains(logs, `"`+code+`"`) {
			t.Errorf("the log holds the secret or the code: %s", logs)
		}
	})

	t.Run("BadInputIsRefusedNamingTheFieldAndCreatesNothing", func(t *testing.T) {
		c := newTOTPConsole(t)
		for name, tc := range map[string]struct {
			values url.Values
			field  string
		}{
			"identity too short":  {url.Values{"identity": {"u1"}, "friendly_name": {"Phone"}}, "identity"},
			"identity a phone":    {url.Values{"identity": {"+14155550100"}, "friendly_name": {"Phone"}}, "identity"},
			"friendly name empty": {url.Values{"identity": {"user-0002"}, "friendly_name": {" "}}, "friendly_name"},
		} {
			w := c.form(t, "/admin/apps/"+c.appID+"/totp", tc.values)
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "<strong>"+tc.field+"</strong>") {
				t.Errorf("%s: got %d, want 400 naming %s; body %s", name, w.Code, tc.field, w.Body)
			}
			if strings.Contains(w.Body.String(), "totp-qr") {
				t.Errorf("%s: a QR code for a refused enrolment", name)
			}
		}
		if facs := c.factors(t); len(facs) != 0 {
			t.Fatalf("refused enrolments created %d factors", len(facs))
		}

		w := c.form(t, "/admin/apps/"+c.appID+"/totp", url.Values{"identity": {"user-0003"}, "friendly_name": {"Phone"}})
		if w.Code != http.StatusCreated {
			t.Fatalf("enrol: got %d", w.Code)
		}
		fac := c.factors(t)[0]
		uri := html.UnescapeString(uriSpan.FindStringSubmatch(w.Body.String())[1])
		right := pqCode(t, uri, time.Now())
		wrong := "000000"
		if wrong == right {
			wrong = "111111"
		}
		for name, tc := range map[string]struct {
			code string
			want int
		}{"not digits": {"12ab56", http.StatusBadRequest}, "wrong": {wrong, http.StatusUnprocessableEntity}} {
			w := c.form(t, "/admin/apps/"+c.appID+"/totp/verify", url.Values{"identity": {"user-0003"}, "factor": {fac.ID}, "code": {tc.code}})
			if w.Code != tc.want || !strings.Contains(w.Body.String(), "<strong>code</strong>") {
				t.Errorf("%s code: got %d, want %d naming code; body %s", name, w.Code, tc.want, w.Body)
			}
		}
		if fac = c.factors(t)[0]; fac.Status != totp.FactorUnverified {
			t.Errorf("factor is %s after refused codes, want unverified", fac.Status)
		}
	})

	t.Run("ViewersSeeButCannotEnrolOrVerify", func(t *testing.T) {
		c := newTOTPConsole(t)
		viewer := bearer(c.tokens[operators.RoleViewer])
		if w := c.call(t, http.MethodGet, "/admin/apps/"+c.appID+"/totp", viewer, nil); w.Code != http.StatusOK {
			t.Errorf("GET as viewer: got %d, want 200", w.Code)
		}
		form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "body": "identity=user-0004&friendly_name=Phone&factor=x&code=123456"}
		for _, path := range []string{"/admin/apps/" + c.appID + "/totp", "/admin/apps/" + c.appID + "/totp/verify"} {
			if w := c.call(t, http.MethodPost, path, viewer, form); w.Code != http.StatusForbidden {
				t.Errorf("POST %s as viewer: got %d, want 403", path, w.Code)
			}
		}
		if facs := c.factors(t); len(facs) != 0 {
			t.Errorf("a viewer's POST created %d factors", len(facs))
		}
	})
}
