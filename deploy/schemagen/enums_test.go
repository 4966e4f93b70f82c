package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// generated has the shapes of pkg/generated/openapi/zz_generated.openapi.go that addEnums
// reads: both kinds of key, and enums in a property, in a list's items, in a map's values,
// and in a property of a definition the chart does not use.
const generated = `package openapi

import (
	corev1 "k8s.io/api/core/v1"
	common "k8s.io/kube-openapi/pkg/common"
	spec "k8s.io/kube-openapi/pkg/validation/spec"
)

func GetOpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	return map[string]common.OpenAPIDefinition{
		corev1.ServicePort{}.OpenAPIModelName(): schema_k8sio_api_core_v1_ServicePort(ref),
		"k8s.io/api/core/v1.ServiceSpec":        schema_k8sio_api_core_v1_ServiceSpec(ref),
		corev1.Unused{}.OpenAPIModelName():      schema_k8sio_api_core_v1_Unused(ref),
	}
}

func schema_k8sio_api_core_v1_ServicePort(ref common.ReferenceCallback) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{
			SchemaProps: spec.SchemaProps{
				Type: []string{"object"},
				Properties: map[string]spec.Schema{
					"protocol": {
						SchemaProps: spec.SchemaProps{
							Default: "TCP",
							Type:    []string{"string"},
							Enum:    []interface{}{"SCTP", "TCP", "UDP"},
						},
					},
				},
			},
		},
	}
}

func schema_k8sio_api_core_v1_ServiceSpec(ref common.ReferenceCallback) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{
			SchemaProps: spec.SchemaProps{
				Properties: map[string]spec.Schema{
					"ipFamilies": {
						SchemaProps: spec.SchemaProps{
							Type: []string{"array"},
							Items: &spec.SchemaOrArray{
								Schema: &spec.Schema{
									SchemaProps: spec.SchemaProps{Type: []string{"string"}, Enum: []interface{}{"IPv4", "IPv6"}},
								},
							},
						},
					},
					"policies": {
						SchemaProps: spec.SchemaProps{
							Type: []string{"object"},
							AdditionalProperties: &spec.SchemaOrBool{
								Allows: true,
								Schema: &spec.Schema{
									SchemaProps: spec.SchemaProps{Type: []string{"string"}, Enum: []interface{}{"Local"}},
								},
							},
						},
					},
				},
			},
		},
	}
}

func schema_k8sio_api_core_v1_Unused(ref common.ReferenceCallback) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Properties: map[string]spec.Schema{"x": {SchemaProps: spec.SchemaProps{Enum: []interface{}{"A"}}}},
		}},
	}
}
`

// published is the same definitions as the published files have them: no enums.
const published = `{
	"io.k8s.api.core.v1.ServicePort": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}},
	"io.k8s.api.core.v1.ServiceSpec": {"type": "object", "properties": {
		"ipFamilies": {"type": "array", "items": {"type": "string"}},
		"policies": {"type": "object", "additionalProperties": {"type": "string"}}
	}}
}`

func TestAddEnums(t *testing.T) {
	var schemas map[string]any
	if err := json.Unmarshal([]byte(published), &schemas); err != nil {
		t.Fatal(err)
	}
	n, err := addEnums(schemas, []byte(generated))
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("laid %d enums, want 3", n)
	}
	for _, c := range []struct {
		path []string
		want []any
	}{
		{[]string{"io.k8s.api.core.v1.ServicePort", "properties", "protocol"}, []any{"SCTP", "TCP", "UDP"}},
		{[]string{"io.k8s.api.core.v1.ServiceSpec", "properties", "ipFamilies", "items"}, []any{"IPv4", "IPv6"}},
		{[]string{"io.k8s.api.core.v1.ServiceSpec", "properties", "policies", "additionalProperties"}, []any{"Local"}},
	} {
		var s any = schemas
		for _, p := range c.path {
			s = s.(map[string]any)[p]
		}
		if got := s.(map[string]any)["enum"]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: enum %v, want %v", strings.Join(c.path, "/"), got, c.want)
		}
	}
	t.Run("PlaceMissingFromPublished", func(t *testing.T) {
		var schemas map[string]any
		if err := json.Unmarshal([]byte(strings.Replace(published, `"protocol"`, `"protocols"`, 1)), &schemas); err != nil {
			t.Fatal(err)
		}
		if _, err := addEnums(schemas, []byte(generated)); err == nil || !strings.Contains(err.Error(), "properties/protocol") {
			t.Errorf("got %v, want an error naming properties/protocol", err)
		}
	})
}

func TestRestFriendlyName(t *testing.T) {
	for goName, want := range map[string]string{
		"k8s.io/api/core/v1.Pod":                          "io.k8s.api.core.v1.Pod",
		"k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		"github.com/example/api/v1.Thing":                 "com.github.example.api.v1.Thing",
		"nodomain/v1.Thing":                               "nodomain.v1.Thing",
	} {
		if got := restFriendlyName(goName); got != want {
			t.Errorf("restFriendlyName(%q) = %q, want %q", goName, got, want)
		}
	}
}

func TestKeepReachable(t *testing.T) {
	schemas := map[string]any{
		"A": map[string]any{"properties": map[string]any{"b": map[string]any{"allOf": []any{map[string]any{"$ref": schemaRefPrefix + "B"}}}}},
		"B": map[string]any{"items": map[string]any{"$ref": schemaRefPrefix + "A"}},
		"C": map[string]any{"type": "string"},
	}
	kept := map[string]any{}
	if err := keepReachable(schemas, []string{"A"}, kept); err != nil {
		t.Fatal(err)
	}
	if _, ok := kept["C"]; ok || len(kept) != 2 {
		t.Errorf("kept %v, want A and B", kept)
	}
	if err := keepReachable(map[string]any{"A": schemas["A"]}, []string{"A"}, map[string]any{}); err == nil {
		t.Error("kept A without its reference B and without an error")
	}
}
