package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a server process whose output goes to a log file we can quote in errors.
type proc struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

// spawn starts a server in its own process group, so a terminal interrupt reaches only the
// test binary, and with a parent-death signal, so it cannot outlive a crashed test binary.
func spawn(name string, args []string, dir, logPath string, cred *syscall.Credential) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// slot holds the current process of a server, so that a stop can interrupt a start.
type slot struct {
	op     sync.Mutex // serialises starts
	mu     sync.Mutex // guards p and closed
	p      *proc
	closed bool
}

// running reports whether the current process is alive.
func (s *slot) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p != nil && !s.p.exited()
}

// set makes p current; after close it kills p instead and reports false.
func (s *slot) set(p *proc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		p.stop(syscall.SIGKILL)
		return false
	}
	s.p = p
	return true
}

// stop stops the current process with sig, if any.
func (s *slot) stop(sig syscall.Signal) {
	s.mu.Lock()
	p := s.p
	s.mu.Unlock()
	if p != nil {
		p.stop(sig)
	}
}

// signal sends sig to the current process without waiting for it to act, and returns the
// process's id; 0 when none runs.
func (s *slot) signal(sig syscall.Signal) int {
	s.mu.Lock()
	p := s.p
	s.mu.Unlock()
	if p == nil || p.exited() {
		return 0
	}
	_ = p.cmd.Process.Signal(sig)
	return p.cmd.Process.Pid
}

// close stops the current process and refuses later ones.
func (s *slot) close(sig syscall.Signal) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop(sig)
}

// errClosed reports a start interrupted by the end of the test run.
var errClosed = errors.New("server closed while starting")

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits; a process that ignores it for 10s is killed.
func (p *proc) stop(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitReady polls check until it succeeds, the process dies, or the deadline passes.
func (p *proc) waitReady(timeout time.Duration, check func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := check(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited (%v) before it was ready\n%s", p.cmd.Path, p.waitErr, logTail(p.logPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %w\n%s", p.cmd.Path, timeout, err, logTail(p.logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail returns the last lines of a server log, for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "--- " + path + " ---\n" + strings.Join(lines, "\n")
}

// freePort asks the kernel for a port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pingRESP checks that a Redis answers PING, without a client library.
func pingRESP(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(buf[:n], []byte("+PONG")) {
		return errors.New("PING answered " + strings.TrimSpace(string(buf[:n])))
	}
	return nil
}
