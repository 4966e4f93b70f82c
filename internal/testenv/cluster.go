package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a private Redis Cluster of three masters, with or without replicas.
type Cluster struct {
	// Addrs are the host:port of the masters at start, in slot order.
	Addrs []string
	// Replicas are the host:port of the masters' replicas at start, in the same order; none
	// for RedisCluster.
	Replicas []string

	tb    testing.TB
	nodes []*RedisServer // the masters, then the replicas
}

// RedisCluster starts three cluster-enabled redis-servers, splits the 16384 slots between
// them and waits until every node agrees; the nodes are stopped at cleanup.
func RedisCluster(tb testing.TB) *Cluster {
	tb.Helper()
	return startCluster(tb, 0, 5*time.Second)
}

// startCluster starts the three masters of a cluster and replicas more servers, whose
// nodes time out after nodeTimeout, and forms the masters' cluster.
func startCluster(tb testing.TB, replicas int, nodeTimeout time.Duration) *Cluster {
	tb.Helper()
	NeedsService(tb, "a Redis Cluster")
	ports, err := clusterPorts(3 + replicas)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	c := &Cluster{tb: tb}
	for i, port := range ports {
		args := []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10), "--cluster-announce-ip", "127.0.0.1",
		}
		if replicas > 0 {
			args = append(args, replArgs...)
		}
		n := newRedisServer(tb.TempDir(), port, args)
		n.tb = tb
		stopAtCleanup(tb, n.close)
		c.nodes = append(c.nodes, n)
		if i < 3 {
			c.Addrs = append(c.Addrs, n.Addr)
		} else {
			c.Replicas = append(c.Replicas, n.Addr)
		}
	}
	// in parallel: a master refuses to report ok until two seconds after its own start
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = n.start() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			unavailable(tb, "redis-server", err, "redis-server")
		}
		tb.Fatalf("testenv: redis cluster: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := formCluster(ctx, c.Addrs); err != nil {
		tb.Fatalf("testenv: redis cluster: %v", err)
	}
	return c
}

// Client returns a cluster client seeded with every node, closed at cleanup.
func (c *Cluster) Client() *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.all()})
	c.tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// all returns the host:port of every node, masters first.
func (c *Cluster) all() []string {
	return append(slices.Clone(c.Addrs), c.Replicas...)
}

// Stop kills the i-th master; its slots become unreachable.
func (c *Cluster) Stop(i int) { c.nodes[i].Stop() }

// Start restarts the i-th master with its old identity and slots (its keys are lost) and waits
// until every node agrees again.
func (c *Cluster) Start(i int) {
	c.tb.Helper()
	c.nodes[i].Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := waitAgreement(ctx, c.all(), len(c.nodes)); err != nil {
		c.tb.Fatalf("testenv: redis cluster after restart: %v", err)
	}
}

// clusterPorts finds n free ports whose cluster bus port (port+10000) is free too; the
// listeners are held until all are chosen so that no port is picked twice.
func clusterPorts(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 200 {
			return nil, fmt.Errorf("no %d free port pairs for a cluster", n)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p >= 55535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			l.Close()
			continue
		}
		held = append(held, l, bus)
		ports = append(ports, p)
	}
	return ports, nil
}

// formCluster assigns the slot ranges, introduces the nodes and waits for agreement.
func formCluster(ctx context.Context, addrs []string) error {
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = redis.NewClient(&redis.Options{Addr: a})
		defer clients[i].Close()
	}
	for i, rdb := range clients {
		if err := rdb.ClusterAddSlotsRange(ctx, slotRanges[i][0], slotRanges[i][1]).Err(); err != nil {
			return fmt.Errorf("addslots on %s: %w", addrs[i], err)
		}
		// distinct epochs spare the nodes a round of collision handling
		if err := rdb.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("set config epoch on %s: %w", addrs[i], err)
		}
	}
	for _, a := range addrs[1:] {
		host, port, _ := net.SplitHostPort(a)
		if err := clients[0].ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("meet %s: %w", a, err)
		}
	}
	return waitAgreement(ctx, addrs, len(addrs))
}

// waitAgreement polls the nodes at addrs until they agree, each knowing known nodes, or ctx
// ends.
func waitAgreement(ctx context.Context, addrs []string, known int) error {
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		defer clients[i].Close()
	}
	var last string
	for {
		agreed, state := clusterAgrees(ctx, clients, known)
		if agreed {
			return nil
		}
		if state != "" && ctx.Err() == nil {
			last = state
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes did not agree: %s", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// clusterAgrees reports whether every node is ok, knows known nodes and maps the slots
// alike, each slot to an online master.
func clusterAgrees(ctx context.Context, clients []*redis.Client, known int) (bool, string) {
	var first string
	for i, rdb := range clients {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") ||
			!strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(known)) {
			return false, fmt.Sprintf("node %d: %q", i, info)
		}
		shards, err := rdb.ClusterShards(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		var parts []string
		for _, sh := range shards {
			var master string
			for _, n := range sh.Nodes {
				if n.Role == "master" && n.Health == "online" {
					master = n.IP + ":" + strconv.FormatInt(n.Port, 10)
				}
			}
			for _, r := range sh.Slots {
				if master == "" {
					return false, fmt.Sprintf("node %d: slots %d-%d without an online master", i, r.Start, r.End)
				}
				parts = append(parts, fmt.Sprintf("%d-%d@%s", r.Start, r.End, master))
			}
		}
		sort.Strings(parts)
		view := strings.Join(parts, " ")
		if i == 0 {
			first = view
		} else if view != first {
			return false, fmt.Sprintf("node 0 sees %s, node %d sees %s", first, i, view)
		}
	}
	return true, ""
}
