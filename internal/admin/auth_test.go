package admin

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestAdminAuth(t *testing.T) {
	e := newAdminEnv(t, nil)
	e.seedFixture()

	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"APIWithoutCredentialsIsRefused", "/admin/api/sends", "", http.StatusUnauthorized},
		{"APIWithWrongBearerIsRefused", "/admin/api/sends", bearer("wrong-token"), http.StatusUnauthorized},
		{"APIWithPrefixOfTokenIsRefused", "/admin/api/sends", bearer(testAdminToken[:10]), http.StatusUnauthorized},
		{"APIWithWrongBasicIsRefused", "/admin/api/sends", basic("admin", "wrong"), http.StatusUnauthorized},
		{"APIWithTokenAsBasicUserIsRefused", "/admin/api/sends", basic(testAdminToken, ""), http.StatusUnauthorized},
		{"APIWithBearerIsServed", "/admin/api/sends", bearer(testAdminToken), http.StatusOK},
		{"APIWithLowerCaseSchemeIsServed", "/admin/api/sends", "bearer " + testAdminToken, http.StatusOK},
		{"APIWithBasicIsServed", "/admin/api/sends", basic("anyone", testAdminToken), http.StatusOK},
		{"PageWithoutCredentialsIsRefused", "/admin/", "", http.StatusUnauthorized},
		{"PageWithWrongPasswordIsRefused", "/admin/?phone=" + url.QueryEscape(phoneA), basic("admin", "nope"), http.StatusUnauthorized},
		{"PageWithBasicIsServed", "/admin/", basic("", testAdminToken), http.StatusOK},
		{"VerificationPageWithoutCredentialsIsRefused", "/admin/verifications/" + uuid.NewString(), "", http.StatusUnauthorized},
		{"ChartsWithoutCredentialsAreRefused", "/admin/charts", "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.call(t, http.MethodGet, tc.path, tc.auth, nil)
			if w.Code != tc.want {
				t.Fatalf("got %d, want %d; body %s", w.Code, tc.want, w.Body)
			}
			if tc.want != http.StatusUnauthorized {
				return
			}
			challenges := strings.Join(w.Header().Values("WWW-Authenticate"), ", ")
			if !strings.Contains(challenges, `Basic realm="otpgate admin"`) {
				t.Errorf("WWW-Authenticate: got %q, want a Basic challenge", challenges)
			}
			if strings.HasPrefix(tc.path, "/admin/api/") {
				if p := decodeProblem(t, w); p.Code != "unauthorized" {
					t.Errorf("problem code: got %v, want %v", p.Code, "unauthorized")
				}
			}
			for _, secret := range []string{phoneA, ipA, "192.0.2"} {
				if strings.Contains(w.Body.String(), secret) {
					t.Errorf("refused response shows %q", secret)
				}
			}
		})
	}

	t.Run("EmptyTokenRefusesEveryone", func(t *testing.T) {
		locked := newAdminEnv(t, func(d *Deps) { d.Token = "" })
		for _, auth := range []string{"", "Bearer ", "Bearer", basic("admin", "")} {
			if w := locked.call(t, http.MethodGet, "/admin/api/sends", auth, nil); w.Code != http.StatusUnauthorized {
				t.Errorf("Authorization %q: got %d, want 401", auth, w.Code)
			}
		}
	})

	t.Run("LogsNeverHoldTheToken", func(t *testing.T) {
		logs := e.logs.String()
		basicCred := base64.StdEncoding.EncodeToString([]byte("anyone:" + testAdminToken))
		for _, secret := range []string{testAdminToken, basicCred, "Authorization", "authorization"} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain %q", secret)
			}
		}
		if !strings.Contains(logs, `"route":"/admin/api/sends"`) {
			t.Errorf("access log: got %q, want a line per request naming the route", logs)
		}
	})

	t.Run("ProbesAndMetricsNeedNoToken", func(t *testing.T) {
		withMetrics := newAdminEnv(t, func(d *Deps) {
			d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "otpgate_up 1") })
		})
		for _, path := range []string{"/healthz", "/readyz", "/metrics", "/admin/static/admin.css"} {
			w := withMetrics.call(t, http.MethodGet, path, "", nil)
			if w.Code != http.StatusOK {
				t.Errorf("GET %s: got %d, want 200", path, w.Code)
			}
		}
	})
}
