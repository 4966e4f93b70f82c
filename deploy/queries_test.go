package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

const dashboardPath = "monitoring/otpgate.dashboard.json"

// query is one PromQL expression and where it comes from.
type query struct {
	where, expr string
}

// grafanaVars are the dashboard's variables inside queries, with values that parse.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	var qs []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				qs = append(qs, query{fmt.Sprintf("dashboard panel %q %s", p.Title, tg.RefID), grafanaVars.Replace(tg.Expr)})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	if len(qs) == 0 {
		t.Fatalf("%s: no queries", dashboardPath)
	}
	return qs
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// uses is what one expression asks of the series it reads.
type uses struct {
	// metrics: each metric name selected, with the label names its matchers name.
	metrics map[string][]string
	// grouping: the label names of by, without, on and ignoring clauses.
	grouping []string
}

var promql = parser.NewParser(parser.Options{})

// parseQuery parses expr and lists the metrics and labels it uses.
func parseQuery(expr string) (uses, error) {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return uses{}, err
	}
	u := uses{metrics: map[string][]string{}}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			var names []string
			for _, m := range n.LabelMatchers {
				if m.Name != "__name__" {
					names = append(names, m.Name)
				}
			}
			u.metrics[n.Name] = append(u.metrics[n.Name], names...)
		case *parser.AggregateExpr:
			u.grouping = append(u.grouping, n.Grouping...)
		case *parser.BinaryExpr:
			if n.VectorMatching != nil {
				u.grouping = append(u.grouping, n.VectorMatching.MatchingLabels...)
			}
		}
		return nil
	})
	return u, nil
}

// TestQueriesParse: every expression of the rules and the dashboard is valid PromQL.
func TestQueriesParse(t *testing.T) {
	for _, q := range allQueries(t) {
		if _, err := parseQuery(q.expr); err != nil {
			t.Errorf("%s: %v\n%s", q.where, err, q.expr)
		}
	}
}

func allQueries(t *testing.T) []query {
	t.Helper()
	var qs []query
	for _, r := range readRules(t) {
		qs = append(qs, query{ruleName(r), r.Expr})
	}
	return append(qs, dashboardQueries(t)...)
}

func ruleName(r rule) string {
	if r.Alert != "" {
		return "alert " + r.Alert
	}
	return "record " + r.Record
}

// exposed is what /metrics offers: each series name with its label names.
type exposed map[string]map[string]bool

// checkQueries reports each query that names a metric the server does not expose, or a
// label that none of the metrics it reads carries. A recording rule's series carries the
// labels of the metrics its expression reads.
func checkQueries(qs []query, recordings map[string]string, have exposed) []string {
	labelsOf := func(name string) (map[string]bool, bool) {
		if l, ok := have[name]; ok {
			return l, true
		}
		expr, ok := recordings[name]
		if !ok {
			return nil, false
		}
		u, err := parseQuery(expr)
		if err != nil {
			return nil, false
		}
		out := map[string]bool{}
		for m := range u.metrics {
			l, ok := have[m]
			if !ok {
				return nil, false
			}
			for k := range l {
				out[k] = true
			}
		}
		return out, true
	}
	var problems []string
	for _, q := range qs {
		u, err := parseQuery(q.expr)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", q.where, err))
			continue
		}
		all := map[string]bool{}
		for m, matched := range u.metrics {
			l, ok := labelsOf(m)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: metric %s is not on /metrics", q.where, m))
				continue
			}
			for _, name := range matched {
				if !l[name] {
					problems = append(problems, fmt.Sprintf("%s: %s has no label %s (it has %s)", q.where, m, name, keys(l)))
				}
			}
			for k := range l {
				all[k] = true
			}
		}
		for _, g := range u.grouping {
			if !all[g] {
				problems = append(problems, fmt.Sprintf("%s: groups by %s, which none of its metrics carries", q.where, g))
			}
		}
	}
	return problems
}

func keys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func recordings(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range readRules(t) {
		if r.Record != "" {
			out[r.Record] = r.Expr
		}
	}
	return out
}

// TestCheckQueriesFindsStrangers: the check itself refuses an unknown metric, an unknown
// label and an unknown grouping label.
func TestCheckQueriesFindsStrangers(t *testing.T) {
	have := exposed{"otpgate_sends_total": {"outcome": true}}
	recs := map[string]string{"otpgate:sends:rate5m": "sum by (outcome) (rate(otpgate_sends_total[5m]))"}
	for _, q := range []string{
		`rate(otpgate_send_total[5m])`,
		`rate(otpgate_sends_total{result="ok"}[5m])`,
		`sum by (country) (rate(otpgate_sends_total[5m]))`,
		`otpgate:sends:rate5m{country="JP"}`,
		`otpgate:checks:rate5m`,
	} {
		if p := checkQueries([]query{{"test", q}}, recs, have); len(p) == 0 {
			t.Errorf("%s: passed, want a problem", q)
		}
	}
	if p := checkQueries([]query{{"test", `sum by (outcome) (otpgate:sends:rate5m{outcome="created"})`}}, recs, have); len(p) > 0 {
		t.Errorf("a valid query: %v", p)
	}
}
