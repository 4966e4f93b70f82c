package deploy

import (
	"flag"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

var update = flag.Bool("update", false, "rewrite kubernetes/otpgate.yaml from the chart")

const (
	chartDir = "helm/otpgate"
	// kubeVersion is the Kubernetes version the chart is rendered for: the one whose API
	// types (k8s.io/api in go.mod) the rendered objects are decoded into.
	kubeVersion    = "1.37.0"
	manifestPath   = "kubernetes/otpgate.yaml"
	manifestHeader = "# otpgate for Kubernetes without Helm: deploy/helm/otpgate rendered with its default values\n# (release name otpgate) by `make deploy-manifests`; edit the chart, not this file.\n# Create the Secret named by existingSecret first; see docs/operations.md.\n"
	prodValues     = "helm/production-values.yaml"
	publicPort     = 8080
	adminPort      = 8081
	readinessPath  = "/readyz"
	healthzPath    = "/healthz"
	releaseName    = "otpgate"
)

// valueSets are the values the chart is linted and rendered with: its defaults and the
// production example.
var valueSets = map[string][]string{
	"Defaults":   nil,
	"Production": {"--values", prodValues},
}

func render(t *testing.T, extra ...string) []byte {
	t.Helper()
	helm := tool(t, "HELM", "helm")
	args := append([]string{"template", releaseName, chartDir, "--kube-version", kubeVersion}, extra...)
	return run(t, ".", helm, args...)
}

func TestChartLints(t *testing.T) {
	helm := tool(t, "HELM", "helm")
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			out := run(t, ".", helm, append([]string{"lint", chartDir, "--strict", "--kube-version", kubeVersion}, values...)...)
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}

// TestRenderedObjectsAreValid renders the chart, decodes every object strictly into the
// pinned Kubernetes API types and validates it against the pinned OpenAPI schemas, then
// checks what the chart promises.
func TestRenderedObjectsAreValid(t *testing.T) {
	kube, kubeErr := openSchemas()
	validate := func(t *testing.T, stream []byte) {
		t.Run("Schemas", func(t *testing.T) {
			if err := requireSchemas(t, kube, kubeErr).validate(stream); err != nil {
				t.Error(err)
			}
		})
	}
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			stream := render(t, values...)
			validate(t, stream)
			objs, err := decodeAll(stream)
			if err != nil {
				t.Fatal(err)
			}
			checkPods(t, objs)
			checkDrain(t, only[*appsv1.Deployment](t, objs))
			checkSecretsByReference(t, objs)
			checkSelectors(t, objs)
			checkNetworkPolicy(t, only[*networkingv1.NetworkPolicy](t, objs))
			checkMigrationJob(t, only[*batchv1.Job](t, objs))
			for _, ing := range all[*networkingv1.Ingress](objs) {
				checkIngress(t, ing, objs)
			}
			for _, sm := range all[*monitoringv1.ServiceMonitor](objs) {
				checkServiceMonitor(t, sm, objs)
			}
		})
	}
	// The autoscaler owns the replica count when it is on, replicaCount when it is off.
	t.Run("AutoscalerOrReplicas", func(t *testing.T) {
		objs, err := decodeAll(render(t))
		if err != nil {
			t.Fatal(err)
		}
		hpa := only[*autoscalingv2.HorizontalPodAutoscaler](t, objs)
		pdb := only[*policyv1.PodDisruptionBudget](t, objs)
		if hpa.Spec.MinReplicas == nil || pdb.Spec.MaxUnavailable == nil || int(*hpa.Spec.MinReplicas) <= pdb.Spec.MaxUnavailable.IntValue() {
			t.Errorf("minReplicas %v, maxUnavailable %v: want more replicas than may be unavailable, so that a node drain leaves one serving",
				hpa.Spec.MinReplicas, pdb.Spec.MaxUnavailable)
		}
		stream := render(t, "--set", "autoscaling.enabled=false,replicaCount=3")
		validate(t, stream)
		objs, err = decodeAll(stream)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(all[*autoscalingv2.HorizontalPodAutoscaler](objs)); n != 0 {
			t.Errorf("got %d autoscalers with autoscaling.enabled=false, want 0", n)
		}
		if d := only[*appsv1.Deployment](t, objs); d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
			t.Errorf("deployment replicas %v, want replicaCount 3", d.Spec.Replicas)
		}
	})
	t.Run("ProductionHasIngressAndServiceMonitor", func(t *testing.T) {
		objs, err := decodeAll(render(t, valueSets["Production"]...))
		if err != nil {
			t.Fatal(err)
		}
		only[*networkingv1.Ingress](t, objs)
		only[*monitoringv1.ServiceMonitor](t, objs)
	})
}

// checkPods: every pod runs unprivileged on a read-only root filesystem, with resources.
func checkPods(t *testing.T, objs []object) {
	t.Helper()
	var specs []corev1.PodSpec
	for _, d := range all[*appsv1.Deployment](objs) {
		specs = append(specs, d.Spec.Template.Spec)
	}
	for _, j := range all[*batchv1.Job](objs) {
		specs = append(specs, j.Spec.Template.Spec)
	}
	if len(specs) != 2 {
		t.Fatalf("got %d pod templates, want 2 (the server and the migration job)", len(specs))
	}
	for _, s := range specs {
		psc := s.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero runAsUser", psc)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("pod security context: want the RuntimeDefault seccomp profile")
		}
		if s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken {
			t.Errorf("automountServiceAccountToken: want false (the server calls no Kubernetes API)")
		}
		for _, c := range s.Containers {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("container %s: no security context", c.Name)
				continue
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("container %s: allowPrivilegeEscalation: want false", c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("container %s: readOnlyRootFilesystem: want true", c.Name)
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("container %s: privileged", c.Name)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
				t.Errorf("container %s: capabilities %+v: want ALL dropped, none added", c.Name, sc.Capabilities)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
					t.Errorf("container %s: no %s request", c.Name, r)
				}
			}
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
				t.Errorf("container %s: no memory limit", c.Name)
			}
		}
	}
}

// checkDrain: the probes and ports are the server's, readiness fails well within the drain
// delay, and Kubernetes waits out the delay and the shutdown before it kills the pod.
func checkDrain(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	s := d.Spec.Template.Spec
	if len(s.Containers) != 1 {
		t.Fatalf("got %d containers, want 1", len(s.Containers))
	}
	c := s.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["http"] != publicPort || ports["admin"] != adminPort {
		t.Errorf("ports %v: want http %d and admin %d", ports, publicPort, adminPort)
	}
	env := envValues(c)
	if env["OTP_HTTP_ADDR"] != ":8080" || env["OTP_ADMIN_ADDR"] != ":8081" {
		t.Errorf("listen addresses %q, %q: want :8080 and :8081 (the admin default, 127.0.0.1, is unreachable in a pod)",
			env["OTP_HTTP_ADDR"], env["OTP_ADMIN_ADDR"])
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"startup", c.StartupProbe, healthzPath}, {"liveness", c.LivenessProbe, healthzPath}, {"readiness", c.ReadinessProbe, readinessPath}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe: GET %s on %s, want %s on http", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), p.path)
		}
	}
	delay, err := time.ParseDuration(env["OTP_DRAIN_DELAY"])
	if err != nil {
		t.Fatalf("OTP_DRAIN_DELAY: %v", err)
	}
	shutdown, err := time.ParseDuration(env["OTP_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatalf("OTP_SHUTDOWN_TIMEOUT: %v", err)
	}
	if r := c.ReadinessProbe; r != nil {
		if seen := time.Duration(r.PeriodSeconds*r.FailureThreshold) * time.Second; seen > delay {
			t.Errorf("readiness notices a drain after up to %s, longer than OTP_DRAIN_DELAY %s", seen, delay)
		}
	}
	if s.TerminationGracePeriodSeconds == nil {
		t.Fatal("no terminationGracePeriodSeconds")
	}
	if grace := time.Duration(*s.TerminationGracePeriodSeconds) * time.Second; grace < delay+shutdown {
		t.Errorf("terminationGracePeriodSeconds %s < OTP_DRAIN_DELAY %s + OTP_SHUTDOWN_TIMEOUT %s", grace, delay, shutdown)
	}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		t.Errorf("a preStop hook would delay SIGTERM, adding to the server's own drain delay")
	}
}

func envValues(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

// secretName matches the names of the server's secret settings.
var secretName = regexp.MustCompile(`SECRET|TOKEN|PASSWORD|PGPASS|_KEYS$|SMTP_URL`)

// checkSecretsByReference: no secret is written into the objects; the containers take
// them from the existing Secret.
func checkSecretsByReference(t *testing.T, objs []object) {
	t.Helper()
	var containers []corev1.Container
	for _, d := range all[*appsv1.Deployment](objs) {
		containers = append(containers, d.Spec.Template.Spec.Containers...)
	}
	for _, j := range all[*batchv1.Job](objs) {
		containers = append(containers, j.Spec.Template.Spec.Containers...)
	}
	for _, c := range containers {
		fromSecret := false
		for _, ef := range c.EnvFrom {
			fromSecret = fromSecret || (ef.SecretRef != nil && ef.SecretRef.Name != "")
		}
		if !fromSecret {
			t.Errorf("container %s: takes no environment from a Secret", c.Name)
		}
		for _, e := range c.Env {
			if e.Value != "" && secretName.MatchString(e.Name) {
				t.Errorf("container %s: %s is written in the manifest; it belongs in the Secret", c.Name, e.Name)
			}
			if e.Name == "REDIS_URL" || e.Name == "DATABASE_URL" {
				u, err := url.Parse(e.Value)
				if err != nil {
					t.Errorf("container %s: %s: %v", c.Name, e.Name, err)
					continue
				}
				if _, ok := u.User.Password(); ok {
					t.Errorf("container %s: %s carries a password; it belongs in the Secret", c.Name, e.Name)
				}
			}
		}
	}
}

// checkSelectors: the services, the disruption budget and the autoscaler find the server.
func checkSelectors(t *testing.T, objs []object) {
	t.Helper()
	d := only[*appsv1.Deployment](t, objs)
	podLabels := labels.Set(d.Spec.Template.Labels)
	for _, svc := range all[*corev1.Service](objs) {
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || len(svc.Spec.Selector) == 0 {
			t.Errorf("service %s selects %v, not the server's pods %v", svc.Name, svc.Spec.Selector, podLabels)
		}
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, objs)
	if sel, err := metaSelector(pdb.Spec.Selector); err != nil || !sel.Matches(podLabels) {
		t.Errorf("disruption budget selects %v, not the server's pods (%v)", pdb.Spec.Selector, err)
	}
	for _, hpa := range all[*autoscalingv2.HorizontalPodAutoscaler](objs) {
		if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != d.Name {
			t.Errorf("autoscaler scales %+v, not %s", hpa.Spec.ScaleTargetRef, d.Name)
		}
		if d.Spec.Replicas != nil {
			t.Errorf("deployment sets replicas while an autoscaler scales it: each upgrade would reset them")
		}
	}
}

// checkNetworkPolicy: the server's pods admit the public port, and the admin port only
// from named peers.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy) {
	t.Helper()
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policy types %v: want Ingress", np.Spec.PolicyTypes)
	}
	admitted := map[string]bool{}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil {
				t.Errorf("an ingress rule admits every port")
				continue
			}
			admitted[p.Port.String()] = true
			if p.Port.String() == "admin" && len(rule.From) == 0 {
				t.Errorf("the admin port is open to everyone")
			}
		}
		if len(rule.Ports) == 0 {
			t.Errorf("an ingress rule admits every port")
		}
	}
	if !admitted["http"] || !admitted["admin"] {
		t.Errorf("admitted ports %v: want http and admin", admitted)
	}
}

// checkMigrationJob: the job migrates before the chart's objects change.
func checkMigrationJob(t *testing.T, j *batchv1.Job) {
	t.Helper()
	hooks := strings.Split(j.Annotations["helm.sh/hook"], ",")
	if !slices.Contains(hooks, "pre-upgrade") || !slices.Contains(hooks, "pre-install") {
		t.Errorf("helm.sh/hook %q: want pre-install,pre-upgrade", j.Annotations["helm.sh/hook"])
	}
	c := j.Spec.Template.Spec.Containers
	if len(c) != 1 || !slices.Equal(c[0].Args, []string{"migrate"}) {
		t.Errorf("job containers %d, args %v: want one running migrate", len(c), c[0].Args)
	}
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s: want Never (the job's backoffLimit retries)", j.Spec.Template.Spec.RestartPolicy)
	}
}

// checkIngress: the Ingress routes to the public API's service only.
func checkIngress(t *testing.T, ing *networkingv1.Ingress, objs []object) {
	t.Helper()
	public := map[string]int32{}
	for _, svc := range all[*corev1.Service](objs) {
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.String() == "http" {
				public[svc.Name] = p.Port
			}
		}
	}
	for _, r := range ing.Spec.Rules {
		for _, p := range r.HTTP.Paths {
			b := p.Backend.Service
			if b == nil || public[b.Name] == 0 || b.Port.Number != public[b.Name] {
				t.Errorf("ingress path %s goes to %+v, not the public API's service %v", p.Path, b, public)
			}
		}
	}
}

// checkServiceMonitor: Prometheus scrapes /metrics on the admin service.
func checkServiceMonitor(t *testing.T, sm *monitoringv1.ServiceMonitor, objs []object) {
	t.Helper()
	sel, err := metaSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	var scraped []string
	for _, svc := range all[*corev1.Service](objs) {
		if sel.Matches(labels.Set(svc.Labels)) {
			scraped = append(scraped, svc.Name)
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "admin" {
				t.Errorf("service monitor selects service %s, whose ports are not the admin port", svc.Name)
			}
		}
	}
	if len(scraped) != 1 {
		t.Errorf("service monitor selects services %v, want the admin service alone", scraped)
	}
	for _, e := range sm.Spec.Endpoints {
		if e.Port != "admin" || e.Path != "/metrics" {
			t.Errorf("endpoint %s%s: want admin /metrics", e.Port, e.Path)
		}
	}
}

// TestChartRefusesShortDrain: a drain delay shorter than readiness needs to notice it
// would let the listeners close while load balancers still send; the chart refuses it.
func TestChartRefusesShortDrain(t *testing.T) {
	helm := tool(t, "HELM", "helm")
	_, stderr, err := runErr(".", helm, "template", releaseName, chartDir, "--kube-version", kubeVersion, "--set", "drain.delaySeconds=2")
	if err == nil || !strings.Contains(string(stderr), "drain.delaySeconds") {
		t.Errorf("helm template with drain.delaySeconds=2: err %v, stderr %s; want a refusal naming drain.delaySeconds", err, stderr)
	}
}

// TestKubernetesManifestIsCurrent: kubernetes/otpgate.yaml is the chart rendered with its
// defaults. `go test -run TestKubernetesManifestIsCurrent -update` (make deploy-manifests)
// rewrites it.
func TestKubernetesManifestIsCurrent(t *testing.T) {
	want := manifestHeader + string(render(t))
	if *update {
		if err := os.WriteFile(manifestPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the chart rendered with its default values: run make deploy-manifests", manifestPath)
	}
	if _, err := decodeAll(got); err != nil {
		t.Error(err)
	}
	t.Run("Schemas", func(t *testing.T) {
		if err := loadSchemas(t).validate(got); err != nil {
			t.Error(err)
		}
	})
}

func metaSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}
