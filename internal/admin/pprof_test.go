package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPprof(t *testing.T) {
	h := NewServer(Deps{Logger: discardLogger(), Token: testAdminToken})
	get := func(path string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return serve(h, req)
	}

	t.Run("NeedsTheAdminToken", func(t *testing.T) {
		for _, header := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789"}} {
			w := get("/debug/pprof/goroutine?debug=1", header)
			if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%v: got %d %q, want 401 with a Bearer challenge", header, w.Code, w.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(w.Body.String(), "goroutine") {
				t.Errorf("%v: got a profile without the token", header)
			}
		}
	})

	t.Run("ServesProfilesWithBearerOrBasic", func(t *testing.T) {
		for name, header := range map[string]map[string]string{
			"bearer": {"Authorization": bearer(testAdminToken)},
			"basic":  {"Authorization": basic("ops", testAdminToken)},
		} {
			if w := get("/debug/pprof/", header); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "goroutine") {
				t.Errorf("%s: index: got %d, want 200 listing the profiles", name, w.Code)
			}
			if w := get("/debug/pprof/goroutine?debug=1", header); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "goroutine profile") {
				t.Errorf("%s: goroutine profile: got %d %.80q, want 200 with the profile", name, w.Code, w.Body.String())
			}
		}
	})
}
