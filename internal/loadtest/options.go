// Package loadtest drives otpgate server processes with concurrent clients and reports
// requests per second, latency percentiles, CPU and memory for sends and checks, against
// otpgate and, side by side, the reference server of internal/loadtest/reference. It sets
// up the servers, database and fake provider a run needs (SetUp), which the pumping
// simulation uses too. cmd/loadgen parses the flags; the server binary never links this.
package loadtest

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Options are loadgen's command line.
type Options struct {
	Bin         string
	Servers     int
	Targets     []string
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	Out         string
	Scenarios   []string
	Reference   bool
	// GuardShare also runs otpgate without the fraud guard, with -reference.
	GuardShare bool
	Rounds     int
	Profile    string
	// ServerEnv is extra environment for the otpgate processes, such as GOGC=200.
	ServerEnv map[string]string
}

// Run sets up the servers, runs the scenarios o names and writes the report.
func Run(ctx context.Context, o Options, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	env, err := SetUp(ctx, o, getenv, stderr)
	if err != nil {
		return err
	}
	defer env.TearDown()

	var results [][]result
	for _, name := range o.Scenarios {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sc, _ := scenarioByName(name)
		fmt.Fprintf(stderr, "loadgen: %s: %s for %v per server with %d in flight\n", name, sc.what, o.Duration, o.Concurrency)
		r, err := runScenario(ctx, env, sc, o)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
	}
	rep := report{opts: o, args: args, results: results, when: time.Now().UTC()}
	rep.table(stdout)
	if o.Out != "" {
		if err := rep.writeMarkdown(o.Out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "loadgen: wrote %s\n", o.Out)
	}
	return nil
}
