package http

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"otpgate/api"
)

func TestOpenAPIDocuments(t *testing.T) {
	t.Run("PublicListenerServesThePublicDocumentAsJSON", func(t *testing.T) {
		h, _ := newTestServer(t, &stubVerifier{}, nil)
		w := do(t, h, request{method: http.MethodGet, path: "/openapi.json"})
		if w.Code != http.StatusOK {
			t.Fatalf("status: got %v, want %v", w.Code, http.StatusOK)
		}
		wantDocument(t, w.Header().Get("Content-Type"), w.Body.Bytes(), api.PublicJSON, "otpgate public API")
	})
}

// wantDocument checks a served OpenAPI document: JSON, the embedded one, with its title.
func wantDocument(t *testing.T, ct string, body []byte, embedded func() ([]byte, error), title string) {
	t.Helper()
	if ct != "application/json" {
		t.Errorf("content type: got %v, want %v", ct, "application/json")
	}
	want, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("body: got %d bytes, want the %d of the embedded document", len(body), len(want))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title string `json:"title"`
		} `json:"info"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("document: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Title != title {
		t.Errorf("document: got openapi %q title %q, want 3.1.0 and %q", doc.OpenAPI, doc.Info.Title, title)
	}
}
