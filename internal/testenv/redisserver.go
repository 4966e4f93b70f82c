package testenv

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a private redis-server that a test may stop and start again.
type RedisServer struct {
	// Addr is host:port; it stays the same across Stop and Start.
	Addr string

	tb   testing.TB
	dir  string
	port int
	args []string

	proc slot
}

// StartRedis starts a private redis-server on a free port, without persistence; it is stopped
// at cleanup.
func StartRedis(tb testing.TB) *RedisServer {
	tb.Helper()
	NeedsService(tb, "redis-server")
	port, err := freePort()
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	s := newRedisServer(tb.TempDir(), port, nil)
	s.tb = tb
	s.mustStart(tb)
	return s
}

// newRedisServer describes a server without starting it.
func newRedisServer(dir string, port int, extra []string) *RedisServer {
	return &RedisServer{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir, port: port, args: extra}
}

// mustStart starts the server and registers its stop, ending the test on failure.
func (s *RedisServer) mustStart(tb testing.TB) {
	tb.Helper()
	stopAtCleanup(tb, s.close)
	if err := s.start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			unavailable(tb, "redis-server", err, "redis-server")
		}
		tb.Fatalf("testenv: %v", err)
	}
}

// URL returns redis://host:port/0 of this server.
func (s *RedisServer) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a client to this server, closed at cleanup.
func (s *RedisServer) Client() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Stop kills the server and waits for it to exit; its data is lost.
func (s *RedisServer) Stop() { s.stop() }

// Start starts a stopped server again on the same port and waits until it answers PING.
func (s *RedisServer) Start() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("testenv: %v", err)
	}
}

// start launches redis-server unless it is running and waits for PING.
func (s *RedisServer) start() error {
	s.proc.op.Lock()
	defer s.proc.op.Unlock()
	if s.proc.running() {
		return nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", "", "--daemonize", "no",
	}, s.args...)
	p, err := spawn(bin, args, s.dir, filepath.Join(s.dir, "redis.log"), nil)
	if err != nil {
		return err
	}
	if !s.proc.set(p) {
		return errClosed
	}
	if err := p.waitReady(10*time.Second, func(ctx context.Context) error { return pingRESP(ctx, s.Addr) }); err != nil {
		p.stop(syscall.SIGKILL)
		return fmt.Errorf("redis-server on %s: %w", s.Addr, err)
	}
	return nil
}

// stop kills the server if it runs.
func (s *RedisServer) stop() { s.proc.stop(syscall.SIGKILL) }

// close kills the server for good.
func (s *RedisServer) close() { s.proc.close(syscall.SIGKILL) }
