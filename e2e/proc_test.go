package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"otpgate/internal/testenv"
)

// daemon runs a helper server (a TLS redis-server, a sentinel) in dir until cleanup; its
// output goes to dir/<base name>.log.
func daemon(t testing.TB, dir, name string, args ...string) *exec.Cmd {
	t.Helper()
	logPath := filepath.Join(dir, filepath.Base(name)+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	return cmd
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// runUntilExit runs the server binary with env and waits up to timeout for it to exit on
// its own, as a misconfigured server should; it returns the log and the exit error.
func runUntilExit(t testing.TB, env map[string]string, timeout time.Duration) (string, error) {
	t.Helper()
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	list = append(list, "OTP_HTTP_ADDR=127.0.0.1:0", "OTP_ADMIN_ADDR=127.0.0.1:0")
	cmd := exec.Command(testenv.ServerBinary(t))
	cmd.Env = list
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("server still running after %v, want it to exit on its own\n%s", timeout, out.String())
		return "", nil
	}
}
