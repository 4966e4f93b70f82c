package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// schemaModules are the modules whose versions the schema file must have been made from:
// the API types the tests decode into, as go.mod pins them.
var schemaModules = []string{"k8s.io/api", "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring"}

// schemas validates rendered objects against the OpenAPI schemas of the pinned Kubernetes
// release and Prometheus Operator, which `make deploy-schemas` writes (deploy/schemagen):
// required fields, types, enums, and, as kubeconform -strict does, no field the schema
// does not name.
type schemas struct {
	byKind map[string]*jsonschema.Schema // apiVersion/kind, as in kinds
}

// errNoSchemas is openSchemas's answer when KUBE_SCHEMAS names no file.
var errNoSchemas = errors.New("no schemas (set KUBE_SCHEMAS, or run make deploy-test, which makes them)")

// openSchemas compiles the schema file that KUBE_SCHEMAS names.
func openSchemas() (*schemas, error) {
	path := os.Getenv("KUBE_SCHEMAS")
	if path == "" {
		return nil, errNoSchemas
	}
	return compileSchemas(path)
}

// requireSchemas returns s, or ends the test for err: without a schema file it skips the
// test, or fails it under CI=true.
func requireSchemas(t *testing.T, s *schemas, err error) *schemas {
	t.Helper()
	if errors.Is(err, errNoSchemas) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func loadSchemas(t *testing.T) *schemas {
	t.Helper()
	s, err := openSchemas()
	return requireSchemas(t, s, err)
}

func compileSchemas(path string) (*schemas, error) {
	f, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	root, _ := doc.(map[string]any)
	if err := sameVersions(root["x-sources"]); err != nil {
		return nil, fmt.Errorf("%s: %w: run make deploy-schemas", path, err)
	}
	components, _ := root["components"].(map[string]any)
	all, _ := components["schemas"].(map[string]any)
	for _, s := range all {
		strict(s)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "file:///kube-schemas.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	out := &schemas{byKind: map[string]*jsonschema.Schema{}}
	for name, s := range all {
		gvks, _ := s.(map[string]any)["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			g, _ := g.(map[string]any)
			apiVersion := fmt.Sprint(g["version"])
			if g["group"] != "" {
				apiVersion = fmt.Sprint(g["group"]) + "/" + apiVersion
			}
			sch, err := c.Compile(url + "#/components/schemas/" + name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out.byKind[apiVersion+"/"+fmt.Sprint(g["kind"])] = sch
		}
	}
	return out, nil
}

// sameVersions checks that the schemas were made from the versions that go.mod pins, so
// that a bump is not tested against the schemas of the version before it.
func sameVersions(sources any) error {
	made, _ := sources.(map[string]any)
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	for _, m := range schemaModules {
		var pinned string
		for _, line := range strings.Split(string(gomod), "\n") {
			if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require ")); len(f) >= 2 && f[0] == m {
				pinned = f[1]
			}
		}
		if pinned == "" || made[m] != pinned {
			return fmt.Errorf("made from %s %v, go.mod has %q", m, made[m], pinned)
		}
	}
	return nil
}

// strict forbids, in schema s and its subschemas, the fields an object's schema does not
// name (kubeconform -strict), except where Kubernetes keeps unknown fields. It also spells
// out x-kubernetes-int-or-string, which a structural schema may state without the anyOf
// that says it in JSON Schema.
func strict(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	_, hasAdditional := m["additionalProperties"]
	if _, ok := m["properties"]; ok && !hasAdditional && m["x-kubernetes-preserve-unknown-fields"] != true {
		m["additionalProperties"] = false
	}
	if m["x-kubernetes-int-or-string"] == true && m["anyOf"] == nil && m["oneOf"] == nil {
		delete(m, "type")
		m["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			strict(p)
		}
	}
	strict(m["items"])
	strict(m["additionalProperties"])
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := m[k].([]any)
		for _, x := range list {
			strict(x)
		}
	}
}

// validate validates every object of a rendered stream against the schema of its kind and
// returns all their errors.
func (s *schemas) validate(stream []byte) error {
	var errs []error
	for _, doc := range docSeparator.Split(string(stream), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			return err
		}
		obj, _ := v.(map[string]any)
		kind := fmt.Sprint(obj["apiVersion"], "/", obj["kind"])
		meta, _ := obj["metadata"].(map[string]any)
		sch, ok := s.byKind[kind]
		if !ok {
			errs = append(errs, fmt.Errorf("%s %v: no schema", kind, meta["name"]))
			continue
		}
		// The API server reads a null as a field left out.
		if err := sch.Validate(dropNulls(obj)); err != nil {
			errs = append(errs, fmt.Errorf("%s %v: %w", kind, meta["name"], err))
		}
	}
	return errors.Join(errs...)
}

func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
			} else {
				v[k] = dropNulls(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = dropNulls(x)
		}
	}
	return v
}

func TestSchemasCoverEveryKind(t *testing.T) {
	s := loadSchemas(t)
	for kind := range kinds {
		if s.byKind[kind] == nil {
			t.Errorf("%s: no schema (add it to deploy/schemagen's kinds)", kind)
		}
	}
}

// TestSchemasRefuseWhatKubernetesWould: each broken object is a valid one with one edit, and
// the valid ones pass, so each case fails for its edit alone.
func TestSchemasRefuseWhatKubernetesWould(t *testing.T) {
	s := loadSchemas(t)
	const (
		deployment     = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 2, selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, protocol: TCP}], resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128}}}]}}}\n"
		service        = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 80, targetPort: http, protocol: TCP}]}\n"
		ingress        = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a}\nspec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}]}}]}\n"
		pdb            = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: a}}}\n"
		serviceMonitor = "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: a, labels: {app: a}}\nspec: {selector: {matchLabels: {app: a}}, endpoints: [{port: admin, interval: 30s, scheme: http}]}\n"
	)
	for name, doc := range map[string]string{
		"Deployment": deployment, "Service": service, "Ingress": ingress,
		"PodDisruptionBudget": pdb, "ServiceMonitor": serviceMonitor,
		"TargetPortNumber":        strings.Replace(service, "targetPort: http", "targetPort: 8080", 1),
		"MaxUnavailablePercent":   strings.Replace(pdb, "maxUnavailable: 1", "maxUnavailable: 25%", 1),
		"NullMeansLeftOut":        strings.Replace(service, "protocol: TCP", "protocol: null", 1),
		"ServiceMonitorPortIndex": strings.Replace(serviceMonitor, "port: admin", "targetPort: 8081", 1),
	} {
		t.Run("Valid"+name, func(t *testing.T) {
			if err := s.validate([]byte(doc)); err != nil {
				t.Errorf("got %v, want no error for\n%s", err, doc)
			}
		})
	}
	for name, c := range map[string]struct{ doc, old, new string }{
		"BadPathType":               {ingress, "pathType: Prefix", "pathType: Prefixed"},
		"MissingPathType":           {ingress, "pathType: Prefix, ", ""},
		"BadContainerProtocol":      {deployment, "protocol: TCP", "protocol: tcp"},
		"BadServiceProtocol":        {service, "protocol: TCP", "protocol: HTTP"},
		"UnknownField":              {deployment, "image: x,", "image: x, imagePullPolicyy: Always,"},
		"UnknownMetadataField":      {service, "metadata: {name: a}", "metadata: {name: a, label: {app: a}}"},
		"UnknownTopLevelField":      {service, "spec:", "specs: {}\nspec:"},
		"MissingContainerName":      {deployment, "name: c, ", ""},
		"MissingSelector":           {deployment, "selector: {matchLabels: {app: a}}, ", ""},
		"WrongType":                 {deployment, "replicas: 2", "replicas: two"},
		"TargetPortNotIntOrString":  {service, "targetPort: http", "targetPort: true"},
		"QuantityNotStringOrNumber": {deployment, "memory: 128}", "memory: [128]}"},
		"BadImagePullPolicy":        {deployment, "image: x,", "image: x, imagePullPolicy: Sometimes,"},
		"ServiceMonitorBadScheme":   {serviceMonitor, "scheme: http", "scheme: ftp"},
		"ServiceMonitorBadInterval": {serviceMonitor, "interval: 30s", "interval: 30 s"},
		"ServiceMonitorUnknown":     {serviceMonitor, "port: admin", "port: admin, honourLabels: true"},
		"ServiceMonitorBadMetadata": {serviceMonitor, "labels: {app: a}", "labels: [app]"},
		"ServiceMonitorNoSelector":  {serviceMonitor, "selector: {matchLabels: {app: a}}, ", ""},
	} {
		t.Run(name, func(t *testing.T) {
			doc := strings.Replace(c.doc, c.old, c.new, 1)
			if doc == c.doc {
				t.Fatalf("%q is not in the valid object", c.old)
			}
			if err := s.validate([]byte(doc)); err == nil {
				t.Errorf("validated without an error:\n%s", doc)
			}
		})
	}
	t.Run("UnknownKind", func(t *testing.T) {
		if err := s.validate([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n")); err == nil {
			t.Error("validated a kind the chart does not render without an error")
		}
	})
}

// TestStrict: the rewriting of a schema before it is compiled, on the shapes that the
// pinned schemas may not contain yet.
func TestStrict(t *testing.T) {
	schema := `{"type": "object", "properties": {
		"port": {"x-kubernetes-int-or-string": true},
		"open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
		"map": {"type": "object", "additionalProperties": {"type": "string"}}
	}}`
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	strict(doc)
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///strict.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("file:///strict.json")
	if err != nil {
		t.Fatal(err)
	}
	for obj, valid := range map[string]bool{
		`{"port": 8080}`:               true,
		`{"port": "http"}`:             true,
		`{"port": true}`:               false,
		`{"open": {"a": "x", "b": 1}}`: true,
		`{"map": {"any": "x"}}`:        true,
		`{"other": 1}`:                 false,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(obj))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != valid {
			t.Errorf("%s: got %v, want valid %v", obj, err, valid)
		}
	}
}
