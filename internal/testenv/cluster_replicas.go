package testenv

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replicatedNodeTimeout is cluster-node-timeout of RedisClusterWithReplicas: a master that
// does not answer for this long is failing, and its replica takes over a second or two later.
const replicatedNodeTimeout = 1500 * time.Millisecond

// RedisClusterWithReplicas starts a Redis Cluster of three masters, each with one replica,
// that fails over within a few seconds of a master's death, and waits until every node
// agrees and every replica is in sync; the nodes are stopped at cleanup.
func RedisClusterWithReplicas(tb testing.TB) *Cluster {
	tb.Helper()
	c := startCluster(tb, 3, replicatedNodeTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.attachReplicas(ctx); err != nil {
		tb.Fatalf("testenv: redis cluster replicas: %v", err)
	}
	return c
}

// Node returns the node at addr, or nil.
func (c *Cluster) Node(addr string) *RedisServer {
	for _, n := range c.nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// HasSlot reports whether the i-th master was given slot at start.
func (c *Cluster) HasSlot(i, slot int) bool {
	r := slotRanges[i]
	return slot >= r[0] && slot <= r[1]
}

// ReplicaOf returns the node that replicates master now.
func (c *Cluster) ReplicaOf(master *RedisServer) *RedisServer {
	c.tb.Helper()
	host, port, _ := net.SplitHostPort(master.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.nodes {
		rdb := adminClient(n.Addr)
		info, err := rdb.Info(ctx, "replication").Result()
		rdb.Close()
		if err == nil && strings.Contains(info, "role:slave") &&
			strings.Contains(info, "master_host:"+host+"\r\n") && strings.Contains(info, "master_port:"+port+"\r\n") {
			return n
		}
	}
	c.tb.Fatalf("testenv: redis cluster: no replica of %s", master.Addr)
	return nil
}

// WaitFailover waits until replica, which replicated the dead master old, is a master
// and the other live nodes agree on the slot map.
func (c *Cluster) WaitFailover(old, replica *RedisServer) {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var live []string
	for _, n := range c.nodes {
		if n != old {
			live = append(live, n.Addr)
		}
	}
	for role(ctx, replica.Addr) != "master" {
		select {
		case <-ctx.Done():
			c.tb.Fatalf("testenv: redis cluster: %s did not take over from %s", replica.Addr, old.Addr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := waitAgreement(ctx, live, len(c.nodes)); err != nil {
		c.tb.Fatalf("testenv: redis cluster after the failover of %s: %v", old.Addr, err)
	}
}

// Rejoin starts a stopped node again; the cluster makes a former master that lost its slots
// a replica of the node that took them. It waits until all nodes agree and n is in sync.
func (c *Cluster) Rejoin(n *RedisServer) {
	c.tb.Helper()
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitAgreement(ctx, c.all(), len(c.nodes)); err != nil {
		c.tb.Fatalf("testenv: redis cluster after %s rejoined: %v", n.Addr, err)
	}
	if err := waitInSync(ctx, n.Addr); err != nil {
		c.tb.Fatalf("testenv: redis cluster: %v", err)
	}
}

// attachReplicas introduces each replica to the cluster, makes it replicate its master and
// waits until all nodes agree and every replica is in sync.
func (c *Cluster) attachReplicas(ctx context.Context) error {
	first := adminClient(c.Addrs[0])
	defer first.Close()
	for i, addr := range c.Replicas {
		host, port, _ := net.SplitHostPort(addr)
		if err := first.ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("meet %s: %w", addr, err)
		}
		m := adminClient(c.Addrs[i])
		id, err := m.Do(ctx, "CLUSTER", "MYID").Text()
		m.Close()
		if err != nil {
			return fmt.Errorf("id of %s: %w", c.Addrs[i], err)
		}
		if err := replicateNode(ctx, addr, id); err != nil {
			return err
		}
	}
	if err := waitAgreement(ctx, c.all(), len(c.nodes)); err != nil {
		return err
	}
	for _, addr := range c.Replicas {
		if err := waitInSync(ctx, addr); err != nil {
			return err
		}
	}
	return nil
}

// replicateNode makes the node at addr a replica of the node with id, retrying until it
// has heard of that node by gossip.
func replicateNode(ctx context.Context, addr, id string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	for {
		err := rdb.ClusterReplicate(ctx, id).Err()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster replicate %s on %s: %w", id, addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// slotRanges is the split of the slots between the three masters that redis-cli --cluster
// create makes.
var slotRanges = [3][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
