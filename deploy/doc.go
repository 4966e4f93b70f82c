// Package deploy holds the tests of what runs otpgate elsewhere than on a developer's
// machine: the Helm chart (helm/otpgate), the manifests rendered from it (kubernetes/),
// and the monitoring mixin (monitoring/: Prometheus rules, their unit tests, a Grafana
// dashboard). It is a module of its own so that the server's go.mod takes no Kubernetes
// or Prometheus dependencies; `make test` runs it with the helm and promtool it installs
// and the OpenAPI schemas that schemagen makes for the pinned versions.
package deploy
