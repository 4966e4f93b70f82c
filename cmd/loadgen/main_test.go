package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"otpgate/internal/loadtest/reference"
	"otpgate/internal/testenv"
)

// TestMain lets the test binary stand in for loadgen's own when a test starts the reference
// server, which loadgen runs by executing itself.
func TestMain(m *testing.M) {
	if os.Getenv(reference.RoleVar) == reference.Role {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		err := reference.Serve(ctx, os.Getenv, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}

// TestShortRun runs every scenario briefly against a started server and the reference
// server, in two alternating slices, and checks the tables and the Markdown report; run
// itself fails when the answers of either server are not the scenario's. loadgen makes its
// own database and key prefix, so it gets the shared servers' URLs.
func TestShortRun(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "docs", "load.md")
	vars := map[string]string{"REDIS_URL": testenv.RedisURL(t), "DATABASE_URL": testenv.PostgresURL(t)}
	var stdout, stderr bytes.Buffer
	args := []string{"loadgen", "-duration", "400ms", "-warmup", "100ms", "-concurrency", "8", "-reference", "-rounds", "2",
		"-out", md, "-bin", testenv.ServerBinary(t)}
	if err := run(t.Context(), args, func(k string) string { return vars[k] }, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "scenario") || !strings.Contains(lines[0], "reference req/s") {
		t.Errorf("got table %q, want a comparison header and three rows", stdout.String())
	}
	report, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| send-allowed | otpgate | ", "| send-denied | reference | ", "| check | otpgate | ",
		"| send-denied | ", " MiB | ", " µs | ", "201×", "429×", "422×", "go run ./cmd/loadgen -duration 400ms"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"loadgen", "-concurrency", "0"},
		{"loadgen", "-scenarios", "send-allowed,nope"},
		{"loadgen", "-duration", "0s"},
		{"loadgen", "-reference", "-targets", "http://127.0.0.1:1"},
		{"loadgen", "-rounds", "0"},
		{"loadgen", "-env", "GOGC"},
	} {
		var out bytes.Buffer
		if err := run(t.Context(), args, func(string) string { return "" }, &out, &out); err == nil {
			t.Errorf("%v: got no error, want one", args[1:])
		}
	}
}
