package httpkit

import (
	"fmt"
	"net/http"
	"strconv"
)

// Document serves an OpenAPI document as JSON. The document is converted once,
// when the routes are built; the embedded YAML is tested, so failing to convert it is a
// build mistake.
func Document(convert func() ([]byte, error)) http.Handler {
	doc, err := convert()
	if err != nil {
		panic(fmt.Sprintf("openapi document: %v", err))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(doc)
	})
}
