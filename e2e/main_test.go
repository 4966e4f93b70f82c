// Package e2e proves otpgate holds up as a set of real server processes: exact admission
// across instances (standalone Redis and Redis Cluster), failing closed when Redis or
// Postgres goes away and recovering without a restart, bounded resources while the SMS
// provider hangs, a SIGTERM drain that drops no accepted request, and TLS to Redis and
// Postgres.
//
// The tests build the server binary once per test run (a normal build, without -race:
// the race detector instruments the test process, which drives the load) and run it as
// child processes configured only through their environment, as an operator would.
//
// `go test ./e2e` runs a short version sized for `make test`; OTPGATE_SOAK=1 (`make soak`)
// runs the long one. OTPGATE_E2E_SERVER=path tests that binary instead of building one.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// soak reports whether the long version was asked for.
func soak() bool { return os.Getenv("OTPGATE_SOAK") == "1" }

// built is the server binary, built on first use; a test binary builds it once.
var built struct {
	once sync.Once
	path string
	err  error
}

// serverBinary returns the path of the otpgate binary built from this checkout, or the
// one OTPGATE_E2E_SERVER names, to test a binary built elsewhere (a release build, say).
func serverBinary(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() {
		if bin := os.Getenv("OTPGATE_E2E_SERVER"); bin != "" {
			built.path = bin
			return
		}
		built.path, built.err = buildServer()
	})
	if built.err != nil {
		tb.Fatalf("build server: %v", built.err)
	}
	return built.path
}

// buildServer builds ./cmd/server into a shared temporary directory, one file per test
// process. Nothing runs after the tests to delete it (testenv.Main ends the process), so
// each build first deletes the binaries of test processes that no longer run.
func buildServer() (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed to build the server: %w", err)
	}
	dir := filepath.Join(os.TempDir(), "otpgate-e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	removeStaleBinaries(dir)
	out := filepath.Join(dir, "otpgate-"+strconv.Itoa(os.Getpid()))
	cmd := exec.Command(gobin, "build", "-o", out, "./cmd/server")
	cmd.Dir = ".." // the module root; go test runs in the package directory
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/server: %w\n%s", err, msg)
	}
	return out, nil
}

// removeStaleBinaries deletes otpgate-<pid> files whose test process has exited.
func removeStaleBinaries(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "otpgate-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
