package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"otpgate/internal/testenv/fixture"
)

// result is what one scenario measured.
type result struct {
	scenario  scenario
	elapsed   time.Duration
	latencies []time.Duration // sorted
	statuses  map[int]int
	errors    int
}

func (r result) rate() float64 { return float64(len(r.latencies)) / r.elapsed.Seconds() }

// quantile returns the q-quantile latency.
func (r result) quantile(q float64) time.Duration { return fixture.Quantile(r.latencies, q) }

// statusSummary reads like "201×12000, 503×2, errors×1".
func (r result) statusSummary() string {
	var codes []int
	for c := range r.statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", c, r.statuses[c]))
	}
	if r.errors > 0 {
		parts = append(parts, fmt.Sprintf("errors×%d", r.errors))
	}
	return strings.Join(parts, ", ")
}

// report is the whole run.
type report struct {
	opts    options
	args    []string
	results []result
	when    time.Time
}

// ms renders a latency in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// rows are the table's lines, the header first.
func (rep report) rows() [][]string {
	rows := [][]string{{"scenario", "requests", "req/s", "p50", "p90", "p99", "max", "answers"}}
	for _, r := range rep.results {
		rows = append(rows, []string{
			r.scenario.name, fmt.Sprint(len(r.latencies)), fmt.Sprintf("%.0f", r.rate()),
			ms(r.quantile(.5)), ms(r.quantile(.9)), ms(r.quantile(.99)), ms(r.quantile(1)), r.statusSummary(),
		})
	}
	return rows
}

// table prints the results aligned, for a terminal.
func (rep report) table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rep.rows() {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// writeMarkdown writes the report as a Markdown file, creating its directory.
func (rep report) writeMarkdown(path string) error {
	var b bytes.Buffer
	o := rep.opts
	servers := fmt.Sprintf("%d otpgate process(es) started by loadgen, over one Redis and one PostgreSQL", o.servers)
	if len(o.targets) > 0 {
		servers = fmt.Sprintf("%d running server(s) given with -targets", len(o.targets))
	}
	fmt.Fprintf(&b, "# Load report\n\n")
	fmt.Fprintf(&b, "Made %s by `cmd/loadgen`:\n\n```\n%s\n```\n\n", rep.when.Format("2006-01-02 15:04 MST"), commandLine(rep.args))
	fmt.Fprintf(&b, "- servers: %s\n", servers)
	fmt.Fprintf(&b, "- load: %d requests in flight, measured for %v per scenario after %v of warm-up\n", o.concurrency, o.duration, o.warmup)
	fmt.Fprintf(&b, "- machine: %d CPUs, %s/%s, %s; loadgen, the servers, Redis and PostgreSQL share it\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- latency is measured by the client, from sending the request to reading the whole answer\n\n")
	rows := rep.rows()
	b.WriteString("| " + strings.Join(rows[0], " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(rows[0])) + "\n")
	for _, row := range rows[1:] {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\nScenarios:\n\n")
	for _, r := range rep.results {
		fmt.Fprintf(&b, "- **%s**: %s (each answered %d).\n", r.scenario.name, r.scenario.what, r.scenario.want)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// commandLine renders the run's arguments as one shell line, the program as "loadgen".
func commandLine(args []string) string {
	parts := []string{"go run ./cmd/loadgen"}
	for _, a := range args[1:] {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
