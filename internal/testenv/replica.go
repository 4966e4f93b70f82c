package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replArgs are the replication settings of every server that takes part in replication:
// a full sync starts at once rather than after the default delay of five seconds, which
// would only slow the tests down.
var replArgs = []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}

// StartReplica starts a private redis-server replicating master, and waits until it holds
// master's data; it is stopped at cleanup.
func StartReplica(tb testing.TB, master *RedisServer) *RedisServer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := configSet(ctx, master.Addr, replArgs...); err != nil {
		tb.Fatalf("testenv: replica of %s: %v", master.Addr, err)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	host, mport, _ := net.SplitHostPort(master.Addr)
	s := newRedisServer(tb.TempDir(), port, append([]string{"--replicaof", host, mport}, replArgs...))
	s.tb = tb
	s.mustStart(tb)
	if err := waitInSync(ctx, s.Addr); err != nil {
		tb.Fatalf("testenv: replica of %s: %v", master.Addr, err)
	}
	return s
}

// Pause stops the server with SIGSTOP, as a machine that stalls would, and returns once it
// no longer runs: it answers nobody, and a replica copies nothing, until Resume.
func (s *RedisServer) Pause() {
	s.tb.Helper()
	pid := s.proc.signal(syscall.SIGSTOP)
	if pid == 0 {
		s.tb.Fatalf("testenv: pause %s: not running", s.Addr)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !stopped(pid) {
		if time.Now().After(deadline) {
			s.tb.Fatalf("testenv: pause %s: process %d did not stop", s.Addr, pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// Resume lets a paused server run on with SIGCONT.
func (s *RedisServer) Resume() { s.proc.signal(syscall.SIGCONT) }

// CutReplicas cuts a master off from its replicas for the rest of its life, as a network
// partition between them would: the default user may no longer sync, and the replicas'
// connections are closed, so they cannot reconnect; what the master writes from then on
// exists on it alone. It returns once no replica is connected. A restart ends the cut,
// since nothing of the server's configuration outlives it.
func (s *RedisServer) CutReplicas() {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := adminClient(s.Addr)
	defer rdb.Close()
	if err := rdb.Do(ctx, "ACL", "SETUSER", "default", "-sync", "-psync").Err(); err != nil {
		s.tb.Fatalf("testenv: cut replicas of %s: %v", s.Addr, err)
	}
	for {
		if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
			s.tb.Fatalf("testenv: cut replicas of %s: %v", s.Addr, err)
		}
		info, err := rdb.Info(ctx, "replication").Result()
		if err == nil && infoField(info, "connected_slaves") == "0" {
			return
		}
		select {
		case <-ctx.Done():
			s.tb.Fatalf("testenv: cut replicas of %s: still connected: %v %q", s.Addr, err, info)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stopped reports whether the process is stopped by a signal, from its state in /proc.
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, so the state follows the last ")".
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	return len(f) > 0 && (f[0] == "T" || f[0] == "t")
}

// adminClient returns a client for one-off commands to addr that gives up at once.
func adminClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
}

// configSet sets name/value pairs with CONFIG SET on the server at addr; the pairs may be
// given as command-line flags ("--name", "value").
func configSet(ctx context.Context, addr string, pairs ...string) error {
	rdb := adminClient(addr)
	defer rdb.Close()
	for i := 0; i+1 < len(pairs); i += 2 {
		name := strings.TrimPrefix(pairs[i], "--")
		if err := rdb.ConfigSet(ctx, name, pairs[i+1]).Err(); err != nil {
			return fmt.Errorf("config set %s on %s: %w", name, addr, err)
		}
	}
	return nil
}

// replicate makes the server at addr a replica of master and waits until it is in sync.
func replicate(ctx context.Context, addr, master string) error {
	host, port, _ := net.SplitHostPort(master)
	rdb := adminClient(addr)
	err := rdb.Do(ctx, "REPLICAOF", host, port).Err()
	rdb.Close()
	if err != nil {
		return fmt.Errorf("replicaof %s on %s: %w", master, addr, err)
	}
	return waitInSync(ctx, addr)
}

// waitInSync waits until the server at addr is a replica whose link to its master is up
// and whose first sync is done, and until its master streams writes to all its replicas.
func waitInSync(ctx context.Context, addr string) error {
	rdb := adminClient(addr)
	defer rdb.Close()
	var last string
	for {
		info, err := rdb.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:slave") &&
			strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") {
			return waitStreaming(ctx, net.JoinHostPort(infoField(info, "master_host"), infoField(info, "master_port")))
		}
		if err != nil {
			last = err.Error()
		} else {
			last = strings.Join(strings.Fields(info), " ")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not in sync with its master: %s", addr, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitStreaming waits until a write to the master at addr reaches every replica it has,
// by WAIT. After a diskless sync a master counts a replica online at once but streams it
// nothing until the replica first acknowledges, up to a second later; until then WAIT
// cannot be satisfied. The write is a short-lived key of the master's own: on a cluster,
// the first of a few names that the node does not redirect.
func waitStreaming(ctx context.Context, addr string) error {
	rdb := adminClient(addr)
	defer rdb.Close()
	info, err := rdb.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("master %s: %w", addr, err)
	}
	replicas, _ := strconv.Atoi(infoField(info, "connected_slaves"))
	var last error
	for key := 0; ; {
		var set *redis.StatusCmd
		acked := redis.NewIntCmd(ctx, "wait", replicas, 100)
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			set = p.Set(ctx, "testenv:replicated:"+strconv.Itoa(key), 1, 10*time.Second)
			return p.Process(ctx, acked)
		})
		switch {
		case redis.HasErrorPrefix(set.Err(), "MOVED") && key < 100:
			key++
			continue
		case err == nil && acked.Val() >= int64(replicas):
			return nil
		case err != nil:
			last = err
		default:
			last = fmt.Errorf("%d of %d replicas acknowledged", acked.Val(), replicas)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("master %s does not stream to its replicas: %w", addr, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// role returns what the server at addr says it is: "master", "slave", or "" when it does
// not answer.
func role(ctx context.Context, addr string) string {
	rdb := adminClient(addr)
	defer rdb.Close()
	info, err := rdb.Info(ctx, "replication").Result()
	if err != nil {
		return ""
	}
	return infoField(info, "role")
}

// infoField returns the value of name in the text of INFO, or "".
func infoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}
