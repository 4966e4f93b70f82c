// Package api holds otpgate's OpenAPI 3.1 documents, embedded so that the server can serve
// them and the tests can validate against them: openapi.yaml describes the public API and
// admin.openapi.yaml the admin API. The YAML files are the source; the JSON the server
// serves is converted from them.
package api

import (
	"embed"
	"fmt"

	"sigs.k8s.io/yaml"
)

//go:embed openapi.yaml admin.openapi.yaml
var files embed.FS

// Names of the two documents.
const (
	PublicFile = "openapi.yaml"
	AdminFile  = "admin.openapi.yaml"
)

// Public returns the public API's document as YAML.
func Public() []byte { return mustRead(PublicFile) }

// Admin returns the admin API's document as YAML.
func Admin() []byte { return mustRead(AdminFile) }

// PublicJSON returns the public API's document as JSON.
func PublicJSON() ([]byte, error) { return toJSON(PublicFile) }

// AdminJSON returns the admin API's document as JSON.
func AdminJSON() ([]byte, error) { return toJSON(AdminFile) }

func toJSON(name string) ([]byte, error) {
	out, err := yaml.YAMLToJSON(mustRead(name))
	if err != nil {
		return nil, fmt.Errorf("api: %s: %w", name, err)
	}
	return out, nil
}

// mustRead reads an embedded file; the names are constants of this package, so a
// failure is a build mistake.
func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("api: %v", err))
	}
	return b
}
