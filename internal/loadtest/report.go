package loadtest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"otpgate/internal/testenv/fixture"
)

// result is what one scenario measured against one system.
type result struct {
	scenario  scenario
	system    string
	elapsed   time.Duration
	latencies []time.Duration // sorted
	statuses  map[int]int
	errors    int
	// peakRSS is the largest peak resident memory of the system's processes during the
	// scenario, in bytes; 0 when unknown (servers given with -targets).
	peakRSS int64
	// cpu is the CPU time the system's processes used while measured; 0 when unknown.
	cpu time.Duration
	// redisCPU and postgresCPU are what the local redis-server and postgres processes used
	// meanwhile.
	redisCPU, postgresCPU time.Duration
}

// perRequest renders a CPU time per measured request ("-" when unknown).
func (r result) perRequest(cpu time.Duration) string {
	if cpu <= 0 || len(r.latencies) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/float64(len(r.latencies)))
}

// cpuPerRequest is the servers' own CPU time per measured request: what the server
// process costs, apart from Redis, PostgreSQL and the provider.
func (r result) cpuPerRequest() string { return r.perRequest(r.cpu) }

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
	opts Options
	args []string
	// results holds, per scenario, one result per system: otpgate first.
	results [][]result
	when    time.Time
}

// Targets of otpgate against the reference, in one run; each scenario has its rate target.
const (
	targetP99 = 1.5       // a p99 at most this many times the reference's
	targetRSS = 100 << 20 // peak resident memory below this under every scenario
)

// ms renders a latency in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// mib renders a memory size in MiB; "-" when unknown.
func mib(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// compared reports whether the run measured the reference too.
func (rep report) compared() bool {
	return len(rep.results) > 0 && len(rep.results[0]) > 1
}

// guardShare reports whether the run measured otpgate without the guard too.
func (rep report) guardShare() bool {
	return len(rep.results) > 0 && len(rep.results[0]) > 2
}

// rows are the table of every result, the header first.
func (rep report) rows() [][]string {
	head := []string{"scenario", "requests", "req/s", "p50", "p90", "p99", "max", "server CPU/req", "Redis CPU/req", "PostgreSQL CPU/req", "peak RSS", "answers"}
	if rep.compared() {
		head = append([]string{head[0], "server"}, head[1:]...)
	}
	rows := [][]string{head}
	for _, per := range rep.results {
		for _, r := range per {
			row := []string{
				r.scenario.name, fmt.Sprint(len(r.latencies)), fmt.Sprintf("%.0f", r.rate()),
				ms(r.quantile(.5)), ms(r.quantile(.9)), ms(r.quantile(.99)), ms(r.quantile(1)), r.cpuPerRequest(),
				r.perRequest(r.redisCPU), r.perRequest(r.postgresCPU), mib(r.peakRSS), r.statusSummary(),
			}
			if rep.compared() {
				row = append([]string{row[0], r.system}, row[1:]...)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// comparison is the table of otpgate against the reference per scenario, the header first.
func (rep report) comparison() [][]string {
	head := []string{"scenario", "otpgate req/s", "reference req/s", "ratio", "target", "otpgate p50", "reference p50",
		"otpgate p99", "reference p99", "p99 ratio", "CPU/req otpgate : reference", "otpgate peak RSS", "targets"}
	if rep.guardShare() {
		head = append(head, "otpgate without guard req/s", "with guard / without", "guard's share")
	}
	rows := [][]string{head}
	for _, per := range rep.results {
		g, ref := per[0], per[1]
		rate := g.rate() / ref.rate()
		p99 := float64(g.quantile(.99)) / float64(ref.quantile(.99))
		met := "met"
		if rate < g.scenario.target || p99 > targetP99 || g.peakRSS >= targetRSS {
			met = "missed"
		}
		row := []string{
			g.scenario.name, fmt.Sprintf("%.0f", g.rate()), fmt.Sprintf("%.0f", ref.rate()), fmt.Sprintf("%.2f", rate),
			fmt.Sprintf("≥ %.1f", g.scenario.target),
			ms(g.quantile(.5)), ms(ref.quantile(.5)), ms(g.quantile(.99)), ms(ref.quantile(.99)), fmt.Sprintf("%.2f", p99),
			g.cpuPerRequest() + " : " + ref.cpuPerRequest(), mib(g.peakRSS), met,
		}
		if rep.guardShare() {
			off := per[2]
			on := g.rate() / off.rate()
			row = append(row, fmt.Sprintf("%.0f", off.rate()), fmt.Sprintf("%.2f", on), fmt.Sprintf("%.0f %%", 100*(1-on)))
		}
		rows = append(rows, row)
	}
	return rows
}

// table prints the results aligned, for a terminal: the comparison when there is one.
func (rep report) table(w io.Writer) {
	rows := rep.rows()
	if rep.compared() {
		rows = rep.comparison()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// markdownTable writes rows as a Markdown table.
func markdownTable(b *bytes.Buffer, rows [][]string) {
	b.WriteString("| " + strings.Join(rows[0], " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(rows[0])) + "\n")
	for _, row := range rows[1:] {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

// writeMarkdown writes the report as a Markdown file, creating its directory.
func (rep report) writeMarkdown(path string) error {
	var b bytes.Buffer
	o := rep.opts
	servers := fmt.Sprintf("%d otpgate process(es) started by loadgen, over one Redis and one PostgreSQL", o.Servers)
	if o.Reference {
		servers = fmt.Sprintf("%d otpgate process(es) and %d reference process(es) started by loadgen, over one Redis and one PostgreSQL", o.Servers, o.Servers)
	}
	if len(o.Targets) > 0 {
		servers = fmt.Sprintf("%d running server(s) given with -targets", len(o.Targets))
	}
	fmt.Fprintf(&b, "# Load report\n\n")
	fmt.Fprintf(&b, "Made %s by `cmd/loadgen`:\n\n```\n%s\n```\n\n", rep.when.Format("2006-01-02 15:04 MST"), commandLine(rep.args))
	fmt.Fprintf(&b, "- servers: %s\n", servers)
	fmt.Fprintf(&b, "- load: %d requests in flight, measured for %v per scenario after %v of warm-up\n", o.Concurrency, o.Duration, o.Warmup)
	fmt.Fprintf(&b, "- machine: %d CPUs, %s/%s, %s; loadgen, the servers, Redis and PostgreSQL share it\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- latency is measured by the client, from sending the request to reading the whole answer\n")
	if rep.compared() {
		fmt.Fprintf(&b, "- each scenario ran against otpgate and against loadgen's reference server (`internal/loadtest/reference`: the least the architecture needs per request) in %d alternating slices each\n", o.Rounds)
		fmt.Fprintf(&b, "- targets: otpgate at least the scenario's target times the reference's req/s, a p99 at most %.1f× the reference's, and a peak RSS below %d MiB\n", targetP99, targetRSS>>20)
		fmt.Fprintf(&b, "- both run the send policy of otpgate's default configuration, fraud guard included (`internal/loadtest/shape.go`: traffic the guard rightly admits), and the reference names a number's limiter keys by its HMAC-SHA256 as otpgate does\n")
	}
	if rep.guardShare() {
		fmt.Fprintf(&b, "- %q is otpgate with `OTP_FRAUD_GUARD=off` (its own database and key prefix) in the same alternating slices: \"with guard / without\" is otpgate's req/s over its req/s, and the guard's share of a request is 1 minus that\n", guardOff)
	}
	b.WriteString("- server CPU/req is the user and system CPU time of the server processes while measured, per request: the server's own cost, apart from Redis, PostgreSQL and the provider; Redis and PostgreSQL CPU/req are the same for every local redis-server and postgres process (other users of them add to both servers' figures alike)\n")
	b.WriteString("- peak RSS is the largest VmHWM of the servers' processes during the scenario\n\n")
	if rep.compared() {
		markdownTable(&b, rep.comparison())
		b.WriteString("\nEvery measurement:\n\n")
	}
	markdownTable(&b, rep.rows())
	b.WriteString("\nScenarios:\n\n")
	for _, per := range rep.results {
		sc := per[0].scenario
		var want []string
		for _, w := range sc.want {
			want = append(want, strconv.Itoa(w))
		}
		fmt.Fprintf(&b, "- **%s**: %s (each answered %s).\n", sc.name, sc.what, strings.Join(want, " or "))
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
