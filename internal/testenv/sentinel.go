package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the sentinels of RedisSentinel monitor their master under.
const SentinelMaster = "otpgate"

// Sentinel is a private Redis Sentinel setup: one master, one replica and three sentinels
// (quorum two) that fail over within a few seconds of the master's death.
type Sentinel struct {
	// Addrs are the host:port of the three sentinels.
	Addrs []string
	// Nodes are the two data servers, the first master at start.
	Nodes []*RedisServer

	tb        testing.TB
	sentinels []*slot
}

// Failover timing: a master that does not answer for down-after is down. failover-timeout
// also bounds each step of the failover and spaces out a failed attempt's retry.
const (
	sentinelDownAfter       = 1000 * time.Millisecond
	sentinelFailoverTimeout = 3000 * time.Millisecond
)

// RedisSentinel starts a master, its replica and three sentinels on free ports, and waits
// until every sentinel knows the replica and the other sentinels, so that a failover can
// happen; all of them are stopped at cleanup.
func RedisSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	NeedsService(tb, "Redis Sentinel")
	port, err := freePort()
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	master := newRedisServer(tb.TempDir(), port, replArgs)
	master.tb = tb
	master.mustStart(tb)
	s := &Sentinel{tb: tb, Nodes: []*RedisServer{master, StartReplica(tb, master)}}
	for range 3 {
		if err := s.startSentinel(tb, master.Addr); err != nil {
			tb.Fatalf("testenv: sentinel: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		tb.Fatalf("testenv: sentinel: %v", err)
	}
	return s
}

// URL returns the redis+sentinel:// URL otpgate takes for this setup.
func (s *Sentinel) URL() string {
	return "redis+sentinel://" + strings.Join(s.Addrs, ",") + "/" + SentinelMaster
}

// Node returns the data server at addr, or nil.
func (s *Sentinel) Node(addr string) *RedisServer {
	for _, n := range s.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Master returns the data server that every sentinel names as master.
func (s *Sentinel) Master() *RedisServer {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addr, err := s.agreedMaster(ctx)
	if err != nil {
		s.tb.Fatalf("testenv: sentinel: %v", err)
	}
	return s.Node(addr)
}

// Replica returns the data server that is not the master.
func (s *Sentinel) Replica() *RedisServer {
	s.tb.Helper()
	m := s.Master()
	for _, n := range s.Nodes {
		if n != m {
			return n
		}
	}
	return nil
}

// WaitFailover waits until every sentinel names a master other than old and that server
// says it is one, and returns it.
func (s *Sentinel) WaitFailover(old *RedisServer) *RedisServer {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var last error
	for {
		addr, err := s.agreedMaster(ctx)
		if err == nil && addr != old.Addr && role(ctx, addr) == "master" {
			return s.Node(addr)
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("the master is %s", addr)
		}
		select {
		case <-ctx.Done():
			s.tb.Fatalf("testenv: sentinel: no failover from %s: %v", old.Addr, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Rejoin starts a stopped data server again and makes it a replica of the current master,
// as an operator would bring a failed master back, and waits until it is in sync. The
// sentinels would convert it themselves, only later.
func (s *Sentinel) Rejoin(n *RedisServer) {
	s.tb.Helper()
	master := s.Master()
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := replicate(ctx, n.Addr, master.Addr); err != nil {
		s.tb.Fatalf("testenv: sentinel: rejoin %s: %v", n.Addr, err)
	}
}

// startSentinel starts one sentinel monitoring master.
func (s *Sentinel) startSentinel(tb testing.TB, master string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		unavailable(tb, "redis-server", err, "redis-server")
	}
	dir := tb.TempDir()
	host, mport, _ := net.SplitHostPort(master)
	// A sentinel rewrites its configuration file, so it gets one of its own.
	conf := strings.Join([]string{
		"port " + strconv.Itoa(port), "bind 127.0.0.1", "daemonize no", `logfile ""`, "dir " + dir,
		fmt.Sprintf("sentinel monitor %s %s %s 2", SentinelMaster, host, mport),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", SentinelMaster, sentinelDownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", SentinelMaster, sentinelFailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", SentinelMaster),
	}, "\n") + "\n"
	confPath := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	sl := &slot{}
	stopAtCleanup(tb, func() { sl.close(syscall.SIGKILL) })
	p, err := spawn(bin, []string{confPath, "--sentinel"}, dir, filepath.Join(dir, "sentinel.log"), nil)
	if err != nil {
		return err
	}
	if !sl.set(p) {
		return errClosed
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := p.waitReady(10*time.Second, func(ctx context.Context) error { return pingRESP(ctx, addr) }); err != nil {
		return err
	}
	// Redis 7 lets the sentinels' periods be shortened: hellos, by which the sentinels find
	// each other, go out every 200ms instead of every 2s. Older sentinels refuse; they are
	// only slower.
	rdb := adminClient(addr)
	_ = rdb.Do(context.Background(), "SENTINEL", "DEBUG", "publish-period", "200", "info-period", "1000").Err()
	rdb.Close()
	s.sentinels = append(s.sentinels, sl)
	s.Addrs = append(s.Addrs, addr)
	return nil
}

// waitReady waits until every sentinel knows the master's replica and the other sentinels.
func (s *Sentinel) waitReady(ctx context.Context) error {
	var last string
	for {
		ready := true
		for _, addr := range s.Addrs {
			sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
			replicas, err1 := sc.Replicas(ctx, SentinelMaster).Result()
			others, err2 := sc.Sentinels(ctx, SentinelMaster).Result()
			sc.Close()
			if err := errors.Join(err1, err2); err != nil || len(replicas) != 1 || len(others) != len(s.Addrs)-1 {
				ready = false
				last = fmt.Sprintf("sentinel %s knows %d replicas and %d other sentinels (%v)", addr, len(replicas), len(others), err)
				break
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %s", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// agreedMaster returns the master address every sentinel names.
func (s *Sentinel) agreedMaster(ctx context.Context) (string, error) {
	var addr string
	for _, a := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1, DialTimeout: time.Second})
		got, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		sc.Close()
		if err != nil {
			return "", fmt.Errorf("sentinel %s: %w", a, err)
		}
		if len(got) != 2 {
			return "", fmt.Errorf("sentinel %s: master address %v", a, got)
		}
		at := net.JoinHostPort(got[0], got[1])
		if addr != "" && at != addr {
			return "", fmt.Errorf("sentinels disagree: %s and %s", addr, at)
		}
		addr = at
	}
	return addr, nil
}
