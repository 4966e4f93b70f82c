package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestShortRun runs every scenario briefly against a started server and checks the table
// and the Markdown report; run itself fails when the answers are not the scenario's. loadgen
// makes its own database and key prefix, so it gets the shared servers' URLs.
func TestShortRun(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "docs", "load.md")
	vars := map[string]string{"REDIS_URL": testenv.RedisURL(t), "DATABASE_URL": testenv.PostgresURL(t)}
	var stdout, stderr bytes.Buffer
	args := []string{"loadgen", "-duration", "300ms", "-warmup", "100ms", "-concurrency", "8", "-out", md, "-bin", testenv.ServerBinary(t)}
	if err := run(t.Context(), args, func(k string) string { return vars[k] }, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "scenario") {
		t.Errorf("got table %q, want a header and three rows", stdout.String())
	}
	report, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| send-allowed | ", "| send-denied | ", "| check | ", "201×", "429×", "422×", "go run ./cmd/loadgen -duration 300ms"} {
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
	} {
		var out bytes.Buffer
		if err := run(t.Context(), args, func(string) string { return "" }, &out, &out); err == nil {
			t.Errorf("%v: got no error, want one", args[1:])
		}
	}
}
