package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ServerBinary returns the otpgate server binary for tests that run it as a child process:
// the one OTPGATE_E2E_SERVER names (a release build, say), else one built from this module
// once per test binary, into a temporary directory that Main removes. It is a normal build,
// without -race: the race detector belongs to the test process, which drives the load.
func ServerBinary(tb testing.TB) string {
	tb.Helper()
	NeedsService(tb, "the server binary")
	if bin := os.Getenv("OTPGATE_E2E_SERVER"); bin != "" {
		return bin
	}
	bin, err := shared.server.get(buildServer)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return bin
}

// buildServer builds otpgate/cmd/server; go test runs inside the module, so the package
// path resolves from any test's directory.
func buildServer() (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed to build the server: %w", err)
	}
	dir, err := os.MkdirTemp("", "otpgate-server-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	if err := atExit(func() { os.RemoveAll(dir) }); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	bin := filepath.Join(dir, "otpgate")
	if out, err := exec.Command(gobin, "build", "-o", bin, "otpgate/cmd/server").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build otpgate/cmd/server: %w\n%s", err, out)
	}
	return bin, nil
}
