// Command loadgen drives real otpgate server processes with concurrent clients and reports
// requests per second and latency percentiles for sends (an all-allowed mix and an
// all-denied flood) and checks (wrong codes within the attempt budget), as a table on
// stdout and a Markdown file. With -scenario pumping it simulates SMS pumping against the
// fraud guard instead (internal/loadtest/pumping and docs/fraud.md).
//
// With -reference it also starts a reference server of its own (internal/loadtest/reference:
// the least otpgate's architecture must do per request, with the same policy, fraud guard
// included) and otpgate with the guard off (-guard-share), runs every scenario against each in turn,
// in alternating slices, and reports them with their ratios, the guard's share and each
// server's peak resident memory per scenario. otpgate runs with its defaults; the sends are
// shaped as the guard admits them (internal/loadtest: shape.go, approvals.go).
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
	"slices"
	"strings"
	"syscall"
	"time"

	"otpgate/internal/loadtest"
	"otpgate/internal/loadtest/pumping"
	"otpgate/internal/loadtest/reference"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if os.Getenv(reference.RoleVar) == reference.Role {
		if err := reference.Serve(ctx, os.Getenv, os.Stdout); err != nil {
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

// run parses the flags and runs the load scenarios or, with -scenario pumping, the
// pumping simulation.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o loadtest.Options
	var p pumping.Options
	var targets, scenarios string
	fs.StringVar(&o.Bin, "bin", "", "otpgate binary to start (default: go build otpgate/cmd/server)")
	fs.IntVar(&o.Servers, "servers", 1, "server processes to start and spread the load over")
	fs.StringVar(&targets, "targets", "", "comma-separated base URLs of running servers; nothing is started then")
	fs.IntVar(&o.Concurrency, "concurrency", 64, "requests in flight")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time per scenario")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured time before each scenario")
	fs.StringVar(&o.Out, "out", "docs/load-report.md", "Markdown report to write (empty: none)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(loadtest.ScenarioNames(), ","), "scenarios to run")
	fs.BoolVar(&o.Reference, "reference", false, "also run every scenario against loadgen's reference server and compare")
	fs.BoolVar(&o.GuardShare, "guard-share", true, "with -reference: also run otpgate with OTP_FRAUD_GUARD=off and report the guard's share of each request")
	fs.IntVar(&o.Rounds, "rounds", 5, "with -reference: alternating slices per server that each scenario's -duration is cut into")
	fs.StringVar(&o.Profile, "profile", "", "directory to write a CPU profile of each server per scenario to (<scenario>-<server>.pprof), taken over its first measured slice")
	o.ServerEnv = map[string]string{}
	fs.Func("env", "NAME=VALUE to add to the environment of the otpgate processes (repeatable), such as GOGC=200", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return errors.New("want NAME=VALUE")
		}
		o.ServerEnv[name] = value
		return nil
	})
	var single string
	fs.StringVar(&single, "scenario", "", `"pumping" runs the SMS pumping simulation instead of the load scenarios`)
	p.Flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch single {
	case "":
	case "pumping":
		return pumping.Run(ctx, o, p, args, getenv, stdout, stderr)
	default:
		return fmt.Errorf(`-scenario: unknown %q (want "pumping")`, single)
	}
	if o.Concurrency < 1 || o.Duration <= 0 || o.Warmup < 0 || (targets == "" && o.Servers < 1) || o.Rounds < 1 {
		return errors.New("-concurrency, -servers and -rounds must be at least 1, -duration positive")
	}
	if o.Reference && targets != "" {
		return errors.New("-reference needs the servers that loadgen starts itself; leave out -targets")
	}
	if !o.Reference {
		o.Rounds = 1
	}
	for _, t := range strings.Split(targets, ",") {
		if t = strings.TrimRight(strings.TrimSpace(t), "/"); t != "" {
			o.Targets = append(o.Targets, t)
		}
	}
	for _, s := range strings.Split(scenarios, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !slices.Contains(loadtest.ScenarioNames(), s) {
				return fmt.Errorf("-scenarios: unknown %q (want some of %s)", s, strings.Join(loadtest.ScenarioNames(), ", "))
			}
			o.Scenarios = append(o.Scenarios, s)
		}
	}

	return loadtest.Run(ctx, o, args, getenv, stdout, stderr)
}
