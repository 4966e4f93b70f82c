package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tool returns the path of a command the tests run: the one the environment variable
// names (the Makefile sets HELM and PROMTOOL to the pinned versions it installed), else
// the one on PATH. Under CI=true a missing tool fails the test instead of skipping it.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found (set %s, or run make test, which installs it)", name, env)
		}
		t.Skipf("%s not found (set %s, or run make test, which installs it)", name, env)
	}
	return p
}

// run runs a command in dir and returns its standard output; a failure ends the test
// with its standard error.
func run(t *testing.T, dir, cmd string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runErr(dir, cmd, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", filepath.Base(cmd), args, err, stderr, out)
	}
	return out
}

// runErr runs a command in dir and returns its standard output, its standard error and
// how it ended.
func runErr(dir, cmd string, args ...string) ([]byte, []byte, error) {
	var stdout, stderr bytes.Buffer
	c := exec.Command(cmd, args...)
	c.Dir = dir
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}
