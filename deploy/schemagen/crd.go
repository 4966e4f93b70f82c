package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// serviceMonitorSchema makes the ServiceMonitor CRD with controller-gen from the Prometheus
// Operator's API package that go.mod pins, as the operator's own Makefile makes the CRDs it
// publishes (crd:crdVersions=v1), and returns the schema of its v1 and controller-gen's
// version.
func serviceMonitorSchema(controllerGen string) (map[string]any, string, error) {
	version, err := command(controllerGen, "--version")
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "schemagen")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	if _, err := command(controllerGen, "crd:crdVersions=v1", "paths="+monitoringModule+"/v1", "output:crd:dir="+dir); err != nil {
		return nil, "", err
	}
	y, err := os.ReadFile(filepath.Join(dir, serviceMonitorCRD))
	if err != nil {
		return nil, "", err
	}
	var crd struct {
		Spec struct {
			Group    string `json:"group"`
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(y, &crd); err != nil {
		return nil, "", fmt.Errorf("%s: %w", serviceMonitorCRD, err)
	}
	for _, v := range crd.Spec.Versions {
		s := v.Schema.OpenAPIV3Schema
		if v.Name != "v1" || s == nil {
			continue
		}
		s["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": crd.Spec.Group, "version": "v1", "kind": "ServiceMonitor"}}
		// The CRD says only that metadata is an object; the API server checks a custom
		// resource's metadata as any object's.
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s: v1 schema has no properties", serviceMonitorCRD)
		}
		props["metadata"] = map[string]any{"allOf": []any{map[string]any{"$ref": schemaRefPrefix + objectMetaName}}}
		return s, strings.TrimSpace(strings.TrimPrefix(string(version), "Version:")), nil
	}
	return nil, "", fmt.Errorf("%s: no v1 schema", serviceMonitorCRD)
}
