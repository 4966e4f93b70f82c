package api_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"otpgate/api"
)

func TestDocuments(t *testing.T) {
	docs := map[string]struct {
		yaml []byte
		json func() ([]byte, error)
	}{
		api.PublicFile: {api.Public(), api.PublicJSON},
		api.AdminFile:  {api.Admin(), api.AdminJSON},
	}
	parsed := map[string]map[string]any{}
	for name, d := range docs {
		t.Run(name+"/JSONIsTheYAML", func(t *testing.T) {
			js, err := d.json()
			if err != nil {
				t.Fatalf("to JSON: %v", err)
			}
			var fromJSON, fromYAML map[string]any
			if err := json.Unmarshal(js, &fromJSON); err != nil {
				t.Fatalf("served JSON: %v", err)
			}
			if err := yaml.Unmarshal(d.yaml, &fromYAML); err != nil {
				t.Fatalf("YAML: %v", err)
			}
			if !reflect.DeepEqual(fromJSON, fromYAML) {
				t.Errorf("the JSON differs from the YAML")
			}
			if fromJSON["openapi"] != "3.1.0" {
				t.Errorf("openapi: got %v, want 3.1.0", fromJSON["openapi"])
			}
			parsed[name] = fromJSON
		})
	}
	// The admin document repeats the public one's problem schemas, so that each document
	// stands alone; they must not drift apart.
	t.Run("SharedSchemasAreTheSame", func(t *testing.T) {
		for _, name := range []string{"Problem", "Violation", "Health", "ProblemNotFound", "ProblemMethodNotAllowed", "ProblemUnavailable",
			"ProblemInternal", "ProblemUnauthorized", "ProblemTooLarge", "ProblemUnsupportedMediaType"} {
			pub, adm := schema(parsed[api.PublicFile], name), schema(parsed[api.AdminFile], name)
			if pub == nil || !reflect.DeepEqual(pub, adm) {
				t.Errorf("schema %s: got %v in %s, want %v as in %s", name, adm, api.AdminFile, pub, api.PublicFile)
			}
		}
	})
}

func schema(doc map[string]any, name string) any {
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	return schemas[name]
}
