// Command schemagen writes the OpenAPI schemas that the deploy tests validate the chart's
// rendered objects against (`make deploy-schemas`), for the versions that deploy/go.mod pins:
//
//   - Kubernetes: the OpenAPI v3 spec that the Kubernetes project publishes in its own
//     module (api/openapi-spec/v3 of k8s.io/kubernetes at the release of k8s.io/api), with
//     the enums of the same release's generated definitions laid back on (enums.go says why);
//   - the ServiceMonitor: the CRD that controller-gen makes from the Prometheus Operator's
//     API types, as the operator itself makes its CRDs.
//
// It keeps only the schemas reachable from the kinds the chart renders and drops their
// descriptions, so that the tests load a small file. The file is a build product (bin/), not
// part of the repository: it is made again from the modules whenever go.mod changes.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	kubeAPIModule       = "k8s.io/api"
	kubeModule          = "k8s.io/kubernetes"
	monitoringModule    = "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring"
	serviceMonitorCRD   = "monitoring.coreos.com_servicemonitors.yaml"
	serviceMonitorName  = "com.coreos.monitoring.v1.ServiceMonitor"
	objectMetaName      = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	schemaRefPrefix     = "#/components/schemas/"
	generatedDefinition = "pkg/generated/openapi/zz_generated.openapi.go"
)

// gvk is a kind the chart renders, as Kubernetes names it in x-kubernetes-group-version-kind.
type gvk struct{ Group, Version, Kind string }

// kubeKinds are the built-in kinds the chart renders; the deploy tests fail on a rendered
// kind that has no schema in the file, so a kind added to the chart is added here too.
func kubeKinds() []gvk {
	return []gvk{
		{"", "v1", "ServiceAccount"},
		{"", "v1", "Service"},
		{"apps", "v1", "Deployment"},
		{"batch", "v1", "Job"},
		{"policy", "v1", "PodDisruptionBudget"},
		{"autoscaling", "v2", "HorizontalPodAutoscaler"},
		{"networking.k8s.io", "v1", "NetworkPolicy"},
		{"networking.k8s.io", "v1", "Ingress"},
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("schemagen", flag.ContinueOnError)
	out := fs.String("out", "", "the file to write")
	goCmd := fs.String("go", "go", "the go command")
	controllerGen := fs.String("controller-gen", "controller-gen", "the controller-gen command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	versions, err := moduleVersions(*goCmd, kubeAPIModule, monitoringModule)
	if err != nil {
		return err
	}
	// k8s.io/api v0.X.Y is published from Kubernetes v1.X.Y.
	apiVersion := versions[kubeAPIModule]
	if !strings.HasPrefix(apiVersion, "v0.") || strings.Contains(apiVersion, "-") {
		return fmt.Errorf("%s %s: not the version of a Kubernetes release", kubeAPIModule, apiVersion)
	}
	kubeVersion := "v1." + strings.TrimPrefix(apiVersion, "v0.")
	kubeDir, err := downloadModule(*goCmd, kubeModule+"@"+kubeVersion)
	if err != nil {
		return err
	}
	schemas := map[string]any{}
	var roots []string
	for _, k := range kubeKinds() {
		name, err := addKind(schemas, filepath.Join(kubeDir, "api/openapi-spec/v3"), k)
		if err != nil {
			return err
		}
		roots = append(roots, name)
	}
	sm, cgVersion, err := serviceMonitorSchema(*controllerGen)
	if err != nil {
		return err
	}
	schemas[serviceMonitorName] = sm
	roots = append(roots, serviceMonitorName)

	kept := map[string]any{}
	if err := keepReachable(schemas, roots, kept); err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(kubeDir, generatedDefinition))
	if err != nil {
		return err
	}
	n, err := addEnums(kept, src)
	if err != nil {
		return err
	}
	for _, s := range kept {
		dropDescriptions(s)
	}
	doc := map[string]any{
		"openapi": "3.0.0",
		"info": map[string]any{
			"title":   "The kinds the otpgate chart renders (schemagen)",
			"version": kubeVersion,
		},
		"x-sources": map[string]string{
			kubeAPIModule:    versions[kubeAPIModule],
			kubeModule:       kubeVersion,
			monitoringModule: versions[monitoringModule],
			"controller-gen": cgVersion,
		},
		"components": map[string]any{"schemas": kept},
	}
	js, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	if err := writeFile(*out, js); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "schemagen: %s: %d schemas (%d enums) of Kubernetes %s and the ServiceMonitor of %s\n",
		*out, len(kept), n, kubeVersion, versions[monitoringModule])
	return nil
}

// moduleVersions returns the versions of the modules that go.mod (the working directory's) requires.
func moduleVersions(goCmd string, modules ...string) (map[string]string, error) {
	out, err := command(goCmd, append([]string{"list", "-m", "-json"}, modules...)...)
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version string }
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		versions[m.Path] = m.Version
	}
	for _, m := range modules {
		if versions[m] == "" {
			return nil, fmt.Errorf("go.mod requires no %s", m)
		}
	}
	return versions, nil
}

// downloadModule fetches a module through the go command, which checks it against the
// checksum database, and returns the directory it is unpacked in.
func downloadModule(goCmd, module string) (string, error) {
	out, err := command(goCmd, "mod", "download", "-json", module)
	if err != nil {
		return "", err
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", module, m.Error)
	}
	return m.Dir, nil
}

// addKind adds every schema of the published file of k's group and version to schemas and
// returns the name of k's.
func addKind(schemas map[string]any, specDir string, k gvk) (string, error) {
	file := "api__" + k.Version + "_openapi.json"
	if k.Group != "" {
		file = "apis__" + k.Group + "__" + k.Version + "_openapi.json"
	}
	var spec struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	js, err := os.ReadFile(filepath.Join(specDir, file))
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(js, &spec); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	found := ""
	for name, s := range spec.Components.Schemas {
		schemas[name] = s
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			if g, ok := g.(map[string]any); ok && g["group"] == k.Group && g["version"] == k.Version && g["kind"] == k.Kind {
				found = name
			}
		}
	}
	if found == "" {
		return "", fmt.Errorf("%s has no schema of %+v", file, k)
	}
	return found, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// command runs name with args and returns its standard output; its standard error is in
// the error.
func command(name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}
