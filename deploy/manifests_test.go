package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// kinds are the objects the chart may render, each with the typed struct of the pinned
// Kubernetes API (k8s.io/api, go.mod) or Prometheus Operator API it must decode into.
var kinds = map[string]func() any{
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"batch/v1/Job":                            func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"networking.k8s.io/v1/Ingress":            func() any { return &networkingv1.Ingress{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
}

// object is one rendered object, decoded strictly into its typed struct.
type object struct {
	kind string // apiVersion/kind
	name string
	obj  any
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decodeAll splits a rendered stream into its objects and decodes each strictly: an
// unknown kind, an unknown field, a field of the wrong type, a malformed quantity or an
// invalid name is an error.
func decodeAll(stream []byte) ([]object, error) {
	var out []object
	for _, doc := range docSeparator.Split(string(stream), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("yaml: %w\n%s", err, doc)
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(js, &tm); err != nil {
			return nil, err
		}
		kind := tm.APIVersion + "/" + tm.Kind
		newObj, ok := kinds[kind]
		if !ok {
			return nil, fmt.Errorf("%s: not a kind the chart should render", kind)
		}
		obj := newObj()
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", kind, err, doc)
		}
		meta := obj.(metav1.Object)
		if errs := validation.IsDNS1123Subdomain(meta.GetName()); len(errs) > 0 {
			return nil, fmt.Errorf("%s %q: %s", kind, meta.GetName(), strings.Join(errs, "; "))
		}
		for k, v := range meta.GetLabels() {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				return nil, fmt.Errorf("%s %q: label %s=%s: %s", kind, meta.GetName(), k, v, strings.Join(errs, "; "))
			}
		}
		if err := imagesGiven(obj); err != nil {
			return nil, fmt.Errorf("%s %q: %w", kind, meta.GetName(), err)
		}
		out = append(out, object{kind: kind, name: meta.GetName(), obj: obj})
	}
	return out, nil
}

// imagesGiven: every container of a pod template names its image. The API server requires
// one, but its OpenAPI schema does not (the field is optional for templates that a
// controller fills in), so neither the types nor the schemas refuse a missing image.
func imagesGiven(obj any) error {
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	default:
		return nil
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if strings.TrimSpace(c.Image) == "" {
			return fmt.Errorf("container %s: no image", c.Name)
		}
	}
	return nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// only returns the one object of type T in objs; there must be exactly one.
func only[T any](t *testing.T, objs []object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.obj.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("got %d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

// all returns every object of type T in objs.
func all[T any](objs []object) []T {
	var found []T
	for _, o := range objs {
		if v, ok := o.obj.(T); ok {
			found = append(found, v)
		}
	}
	return found
}

func TestDecodeRefusesWhatKubernetesWould(t *testing.T) {
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {spec: {initContainers: [{name: i, image: x}], containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}}}\n"
	for name, doc := range map[string]string{
		"UnknownField":  "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {portz: []}\n",
		"WrongType":     "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: eighty}]}\n",
		"BadQuantity":   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec: {template: {spec: {containers: [{name: c, image: x, resources: {limits: {memory: lots}}}]}}}\n",
		"UnknownKind":   "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n",
		"InvalidName":   "apiVersion: v1\nkind: Service\nmetadata: {name: Not_A_Name}\n",
		"MissingImage":  strings.Replace(deployment, "image: x, ", "", 1),
		"MisspeltProbe": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {spec: {containers: [{name: c, image: x, readinesProbe: {}}]}}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeAll([]byte(doc)); err == nil {
				t.Errorf("decoded %q without an error", doc)
			}
		})
	}
	t.Run("MissingInitContainerImage", func(t *testing.T) {
		if _, err := decodeAll([]byte(strings.Replace(deployment, "name: i, image: x", "name: i", 1))); err == nil {
			t.Error("decoded an init container without an image without an error")
		}
	})
	t.Run("ValidDeploymentDecodes", func(t *testing.T) {
		if objs, err := decodeAll([]byte(deployment)); err != nil || len(objs) != 1 {
			t.Fatalf("got %d objects, %v; want 1, nil", len(objs), err)
		}
	})
	t.Run("ValidServiceDecodes", func(t *testing.T) {
		objs, err := decodeAll([]byte("---\n# Source: x\napiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 80}]}\n"))
		if err != nil || len(objs) != 1 {
			t.Fatalf("got %d objects, %v; want 1, nil", len(objs), err)
		}
	})
}
