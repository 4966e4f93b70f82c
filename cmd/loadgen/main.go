// Command loadgen drives real otpgate server processes with concurrent clients and reports
// requests per second and latency percentiles for sends (an all-allowed mix and an
// all-denied flood) and checks (wrong codes within the attempt budget), as a table on
// stdout and a Markdown file. With -scenario pumping it simulates SMS pumping against the
// fraud guard instead (see pumping.go and docs/fraud.md).
//
// With -reference it also starts a reference server of its own (reference.go: the least
// otpgate's architecture must do per request, with the same policy, fraud guard included)
// and otpgate with the guard off (-guard-share), runs every scenario against each in turn,
// in alternating slices, and reports them with their ratios, the guard's share and each
// server's peak resident memory per scenario. otpgate runs with its defaults; the sends are
// shaped as the guard admits them (shape.go, approvals.go).
//
// By default it builds the server, starts -servers processes of it against the Redis of
// REDIS_URL (default redis://127.0.0.1:6379/0, under a fresh key prefix) and a fresh
// database created through DATABASE_URL (default the local postgres superuser), with a
// built-in webhook SMS provider that answers at once, and removes all of it afterwards.
// With -targets it drives servers that are already running instead; they must trust
// X-Forwarded-For from this machine (OTP_TRUSTED_PROXIES) for the clients to look distinct.
//
//	loadgen [-servers 1] [-concurrency 64] [-duration 10s] [-out docs/load-report.md]
//	loadgen -reference [-rounds 5] [-profile dir]
//	loadgen -targets http://10.0.0.5:8080,http://10.0.0.6:8080
//	loadgen -scenario pumping [-short] [-cases fresh,established,surge] [-modes off,shadow,enforce] [-out docs/fraud-simulation.md]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if os.Getenv(referenceRoleVar) == referenceRole {
		if err := serveReference(ctx, os.Getenv, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen reference:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	bin         string
	servers     int
	targets     []string
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	out         string
	scenarios   []string
	reference   bool
	// guardShare also runs otpgate without the fraud guard, with -reference.
	guardShare bool
	rounds     int
	profile    string
	// env is extra environment for the otpgate processes, such as GOGC=200.
	env map[string]string
	// pumping holds the -scenario pumping flags.
	pumping pumpingOptions
}

// run parses the flags, sets up the servers, runs the scenarios and writes the report.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var targets, scenarios string
	fs.StringVar(&o.bin, "bin", "", "otpgate binary to start (default: go build otpgate/cmd/server)")
	fs.IntVar(&o.servers, "servers", 1, "server processes to start and spread the load over")
	fs.StringVar(&targets, "targets", "", "comma-separated base URLs of running servers; nothing is started then")
	fs.IntVar(&o.concurrency, "concurrency", 64, "requests in flight")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per scenario")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured time before each scenario")
	fs.StringVar(&o.out, "out", "docs/load-report.md", "Markdown report to write (empty: none)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(scenarioNames(), ","), "scenarios to run")
	fs.BoolVar(&o.reference, "reference", false, "also run every scenario against loadgen's reference server and compare")
	fs.BoolVar(&o.guardShare, "guard-share", true, "with -reference: also run otpgate with OTP_FRAUD_GUARD=off and report the guard's share of each request")
	fs.IntVar(&o.rounds, "rounds", 5, "with -reference: alternating slices per server that each scenario's -duration is cut into")
	fs.StringVar(&o.profile, "profile", "", "directory to write a CPU profile of each server per scenario to (<scenario>-<server>.pprof), taken over its first measured slice")
	o.env = map[string]string{}
	fs.Func("env", "NAME=VALUE to add to the environment of the otpgate processes (repeatable), such as GOGC=200", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return errors.New("want NAME=VALUE")
		}
		o.env[name] = value
		return nil
	})
	var single string
	fs.StringVar(&single, "scenario", "", `"pumping" runs the SMS pumping simulation instead of the load scenarios`)
	o.pumping.flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch single {
	case "":
	case "pumping":
		return runPumping(ctx, o, args, getenv, stdout, stderr)
	default:
		return fmt.Errorf(`-scenario: unknown %q (want "pumping")`, single)
	}
	if o.concurrency < 1 || o.duration <= 0 || o.warmup < 0 || (targets == "" && o.servers < 1) || o.rounds < 1 {
		return errors.New("-concurrency, -servers and -rounds must be at least 1, -duration positive")
	}
	if o.reference && targets != "" {
		return errors.New("-reference needs the servers that loadgen starts itself; leave out -targets")
	}
	if !o.reference {
		o.rounds = 1
	}
	for _, t := range strings.Split(targets, ",") {
		if t = strings.TrimRight(strings.TrimSpace(t), "/"); t != "" {
			o.targets = append(o.targets, t)
		}
	}
	for _, s := range strings.Split(scenarios, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if _, ok := scenarioByName(s); !ok {
				return fmt.Errorf("-scenarios: unknown %q (want some of %s)", s, strings.Join(scenarioNames(), ", "))
			}
			o.scenarios = append(o.scenarios, s)
		}
	}

	env, err := setUp(ctx, o, getenv, stderr)
	if err != nil {
		return err
	}
	defer env.tearDown()

	var results [][]result
	for _, name := range o.scenarios {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sc, _ := scenarioByName(name)
		fmt.Fprintf(stderr, "loadgen: %s: %s for %v per server with %d in flight\n", name, sc.what, o.duration, o.concurrency)
		r, err := runScenario(ctx, env, sc, o)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
	}
	rep := report{opts: o, args: args, results: results, when: time.Now().UTC()}
	rep.table(stdout)
	if o.out != "" {
		if err := rep.writeMarkdown(o.out); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "loadgen: wrote %s\n", o.out)
	}
	return nil
}
