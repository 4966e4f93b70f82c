package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"otpgate/api"
)

func TestOpenAPIDocument(t *testing.T) {
	t.Run("ServedAsJSONWithTheToken", func(t *testing.T) {
		e := newAdminEnv(t, nil)
		w := e.call(t, http.MethodGet, "/admin/openapi.json", bearer(testAdminToken), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("status: got %v, want %v", w.Code, http.StatusOK)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("content type: got %v, want %v", ct, "application/json")
		}
		want, err := api.AdminJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Body.Bytes(), want) {
			t.Errorf("body: got %d bytes, want the %d of the embedded document", w.Body.Len(), len(want))
		}
		var doc struct {
			OpenAPI string `json:"openapi"`
			Info    struct {
				Title string `json:"title"`
			} `json:"info"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatalf("document: %v", err)
		}
		if doc.OpenAPI != "3.1.0" || doc.Info.Title != "otpgate admin API" {
			t.Errorf("document: got openapi %q title %q, want 3.1.0 and %q", doc.OpenAPI, doc.Info.Title, "otpgate admin API")
		}
	})
	t.Run("NeedsTheToken", func(t *testing.T) {
		e := newAdminEnv(t, nil)
		w := e.call(t, http.MethodGet, "/admin/openapi.json", "", nil)
		if p := decodeProblem(t, w); w.Code != http.StatusUnauthorized || p.Code != "unauthorized" {
			t.Errorf("got %v %v, want 401 unauthorized", w.Code, p.Code)
		}
		if got := w.Header().Values("WWW-Authenticate"); len(got) != 2 {
			t.Errorf("WWW-Authenticate: got %q, want the Bearer and Basic challenges", got)
		}
	})
}
