package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	rulesPath    = "monitoring/otpgate.rules.yml"
	runbooksPath = "../docs/operations.md"
)

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Record      string            `json:"record"`
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func readRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	var rules []rule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

func TestPromtoolChecksRules(t *testing.T) {
	promtool := tool(t, "PROMTOOL", "promtool")
	run(t, ".", promtool, "check", "rules", rulesPath)
}

// TestPromtoolTestsRules runs the unit tests of the rules: each alert fires on synthetic
// series meant to fire it and stays quiet on others.
func TestPromtoolTestsRules(t *testing.T) {
	promtool := tool(t, "PROMTOOL", "promtool")
	files := ruleTestFiles(t)
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	run(t, "monitoring", promtool, append([]string{"test", "rules"}, files...)...)
}

// ruleTestFiles are the unit test files of the rules: one evaluated every minute, one
// every five minutes for series that span a day.
func ruleTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("monitoring/*.test.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule tests in monitoring/ (%v)", err)
	}
	return files
}

// ruleTests is the part of the unit test file this test reads.
type ruleTests struct {
	Tests []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryAlertIsTestedAndHasARunbook: each alert has a severity the runbooks explain, a
// unit test in which it fires and one in which it stays quiet, and a runbook section.
func TestEveryAlertIsTestedAndHasARunbook(t *testing.T) {
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, f := range ruleTestFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tests ruleTests
		if err := yaml.Unmarshal(b, &tests); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range tests.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	docs, err := os.ReadFile(runbooksPath)
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} (Otpgate\w+)\s*$`).FindAllStringSubmatch(string(docs), -1) {
		headings[m[1]] = true
	}
	alerts := 0
	for _, r := range readRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts++
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if !fires[r.Alert] {
			t.Errorf("%s: no unit test in which it fires", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no unit test in which it stays quiet", r.Alert)
		}
		if !headings[r.Alert] {
			t.Errorf("%s: no runbook section (### %s) in docs/operations.md", r.Alert, r.Alert)
		}
		delete(headings, r.Alert)
	}
	if alerts == 0 {
		t.Fatal("no alerts in the rules")
	}
	for h := range headings {
		t.Errorf("docs/operations.md has a runbook for %s, which is no alert", h)
	}
	if !strings.Contains(string(docs), "otpgate.rules.yml") {
		t.Errorf("docs/operations.md does not name the rules file")
	}
}
