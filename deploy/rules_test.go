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
// unit test in which it fires and one in which it stays quiet, and a runbook section that
// says what it means, what to look at and what to do.
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
	headings := runbooks(string(docs))
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
		section, ok := headings[r.Alert]
		if !ok {
			t.Errorf("%s: no runbook section (### %s) in docs/operations.md", r.Alert, r.Alert)
		}
		for _, part := range runbookParts {
			if ok && !strings.Contains(section, part) {
				t.Errorf("%s: its runbook has no %s paragraph", r.Alert, part)
			}
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

// runbookParts begin the paragraphs every runbook has: what the alert means, what to look
// at in the console, what to do.
var runbookParts = []string{"**Means:**", "**Look at:**", "**Do:**"}

var (
	runbookHeading = regexp.MustCompile(`(?m)^#{2,4} (Otpgate\w+)\s*$`)
	anyHeading     = regexp.MustCompile(`(?m)^#`)
)

// runbooks maps each alert's runbook heading in docs to the text of its section, up to
// the next heading.
func runbooks(docs string) map[string]string {
	out := map[string]string{}
	for _, loc := range runbookHeading.FindAllStringSubmatchIndex(docs, -1) {
		section := docs[loc[1]:]
		if end := anyHeading.FindStringIndex(section); end != nil {
			section = section[:end[0]]
		}
		out[docs[loc[2]:loc[3]]] = section
	}
	return out
}

func TestRunbooksSplitsSections(t *testing.T) {
	got := runbooks("## Runbooks\n\n### OtpgateA\n\n**Means:** a\n\n### OtpgateB\n\n**Do:** b\n\n## Tests\n\nc\n")
	if len(got) != 2 || !strings.Contains(got["OtpgateA"], "**Means:** a") || strings.Contains(got["OtpgateA"], "**Do:**") ||
		!strings.Contains(got["OtpgateB"], "**Do:** b") || strings.Contains(got["OtpgateB"], "c") {
		t.Errorf("got %q, want the two sections, each up to the next heading", got)
	}
}
