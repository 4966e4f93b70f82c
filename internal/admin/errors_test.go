package admin

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	testfixture "otpgate/internal/testenv/fixture"
	"reflect"
	"slices"
	"strings"
	"testing"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

func TestAdminProblemFor(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"Unauthorized", errUnauthorized, 401, "unauthorized"},
		{"CSRF", fmt.Errorf("%w: no CSRF cookie", errCSRF), 403, "csrf_failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := adminProblemFor(tt.err)
			if p.Status != tt.status || p.Code != tt.code {
				t.Errorf("got %v %v, want %v %v", p.Status, p.Code, tt.status, tt.code)
			}
			if q := httpkit.ProblemFor(tt.err); !reflect.DeepEqual(p, q) {
				t.Errorf("got %+v, want the public mapping %+v", p, q)
			}
		})
	}
	t.Run("NotFoundNamesSendOrVerification", func(t *testing.T) {
		p := adminProblemFor(fmt.Errorf("postgres: send: %w", otp.ErrNotFound))
		if p.Status != 404 || p.Code != "not_found" || p.Detail != "there is no such send or verification" {
			t.Errorf("got %v %v %q, want 404 not_found %q", p.Status, p.Code, p.Detail, "there is no such send or verification")
		}
	})
}

func TestAdminErrorLogsLikeEveryProblem(t *testing.T) {
	for name, path := range map[string]string{"API": "/admin/api/sends", "Console": "/admin/"} {
		t.Run(name, func(t *testing.T) {
			logs := &testfixture.SyncBuffer{}
			log := slog.New(slog.NewJSONHandler(logs, nil))
			view, err := newAdminView(log, newCSRFGuard("admin token of the test"))
			if err != nil {
				t.Fatal(err)
			}
			var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				adminError(w, r, log, view, errors.New("disk on fire"))
			})
			// The shared middleware gives the request its id, as on the listener.
			for _, mw := range slices.Backward(httpkit.Common(slog.New(slog.DiscardHandler), nil, nil, 0, maxAdminBodyBytes)) {
				h = mw(h)
			}
			r := httptest.NewRequest("GET", path, nil)
			r.Header.Set("X-Request-Id", "req-7")
			w := serve(h, r)
			if w.Code != 500 || strings.Contains(w.Body.String(), "disk on fire") {
				t.Errorf("got %v %s, want a 500 that does not leak the error", w.Code, w.Body)
			}
			if got := strings.Count(logs.String(), `"msg":"internal error","request_id":"req-7","err":"disk on fire"`); got != 1 {
				t.Errorf("internal error logged %v times, want 1: %s", got, logs)
			}
		})
	}
}
