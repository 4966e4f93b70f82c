package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/pii"
	"otpgate/internal/testenv"
)

// phoneRule is the send rule per phone of the failover runs. Its window is longer than any
// run, so what it allows is a number: at most 3 sends per phone over the whole run.
const phoneRule = 3

// redisHA is a replicated Redis a failover run drives: the URL otpgate gets, which phones
// live on the shard whose master is killed, and the steps of a failover on that shard.
type redisHA struct {
	url string
	// onShard reports, for each phone, whether its limiter key lives on that shard.
	onShard func(t *testing.T, phones []string) []bool
	// master and replica return the shard's nodes now.
	master, replica func(t *testing.T) *testenv.RedisServer
	// failover waits until replica has taken over from the killed master old.
	failover func(t *testing.T, old, replica *testenv.RedisServer)
	// rejoin brings a killed node back, as a replica.
	rejoin func(t *testing.T, n *testenv.RedisServer)
}

// sentinelHA starts one master, one replica and three sentinels.
func sentinelHA(t *testing.T) redisHA {
	s := testenv.RedisSentinel(t)
	return redisHA{
		url: s.URL(),
		onShard: func(_ *testing.T, phones []string) []bool {
			all := make([]bool, len(phones))
			for i := range all {
				all[i] = true
			}
			return all
		},
		master:  func(*testing.T) *testenv.RedisServer { return s.Master() },
		replica: func(*testing.T) *testenv.RedisServer { return s.Replica() },
		failover: func(t *testing.T, old, replica *testenv.RedisServer) {
			if got := s.WaitFailover(old); got != replica {
				t.Fatalf("failover promoted %s, want the replica %s", got.Addr, replica.Addr)
			}
		},
		rejoin: func(_ *testing.T, n *testenv.RedisServer) { s.Rejoin(n) },
	}
}

// clusterHA starts three masters with a replica each; the first master's shard fails.
func clusterHA(t *testing.T) redisHA {
	c := testenv.RedisClusterWithReplicas(t)
	master := c.Node(c.Addrs[0])
	rdb := c.Client()
	return redisHA{
		url: "redis+cluster://" + strings.Join(append(append([]string(nil), c.Addrs...), c.Replicas...), ","),
		onShard: func(t *testing.T, phones []string) []bool {
			// The limiter's key of a phone has the hash tag "phone:<the number's index>",
			// the keyed hash the server derives from its secret.
			keys, err := pii.New([]byte(testSecret), "")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			out := make([]bool, len(phones))
			slots := make([]*redis.IntCmd, len(phones))
			if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, ph := range phones {
					slots[i] = p.ClusterKeySlot(ctx, "{phone:"+keys.Index(ph)+"}")
				}
				return nil
			}); err != nil {
				t.Fatalf("CLUSTER KEYSLOT: %v", err)
			}
			for i, s := range slots {
				out[i] = c.HasSlot(0, int(s.Val()))
			}
			return out
		},
		master:  func(*testing.T) *testenv.RedisServer { return master },
		replica: func(*testing.T) *testenv.RedisServer { return c.ReplicaOf(master) },
		failover: func(_ *testing.T, old, replica *testenv.RedisServer) {
			c.WaitFailover(old, replica)
			master = replica
		},
		rejoin: func(_ *testing.T, n *testenv.RedisServer) { c.Rejoin(n) },
	}
}

// TestRedisFailover kills the master of a replicated Redis under steady load on a few
// phones at their limit and checks, after the failover, that no phone got more sends than
// its rules allow when OTP_REDIS_WAIT_REPLICAS is on; with it off, the run reports what
// the failover let through. Just before the kill the master is cut off from its replica,
// as by a partition between them: its last writes then die with it. Without the cut, on a
// loopback link, they would be a fraction of a millisecond of writes, too few to show
// anything. Every run also checks that sends during the failover fail closed (503) or are
// admitted with a reservation the new master holds, that every SMS answers an admitted
// send, and that otpgate recovers without a restart.
func TestRedisFailover(t *testing.T) {
	for _, topo := range []struct {
		name  string
		start func(*testing.T) redisHA
	}{{"Sentinel", sentinelHA}, {"Cluster", clusterHA}} {
		for _, wait := range []int{1, 0} {
			t.Run(fmt.Sprintf("%s/WaitReplicas=%d", topo.name, wait), func(t *testing.T) {
				runFailover(t, topo.start(t), wait)
			})
		}
	}
}

// failoverSize sizes a run: load, how long the master is cut off from its replica before
// the kill, and how many failovers.
type failoverSize struct {
	conc, cycles          int
	steady, lag           time.Duration
	early, perLate, fresh int
}

func failoverRunSize() failoverSize {
	if soak() {
		// About 35,000 fresh phones are asked for over a run on a 2-core machine; the
		// pool leaves room for machines several times faster.
		return failoverSize{conc: 24, cycles: 3, steady: 20 * time.Second, lag: 3 * time.Second, early: 8, perLate: 8, fresh: 150_000}
	}
	return failoverSize{conc: 8, cycles: 1, steady: time.Second, lag: 700 * time.Millisecond, early: 4, perLate: 4, fresh: 5_000}
}

// cycle is when one failover's steps happened.
type cycle struct {
	cut, killed, failedOver, rejoined, recovered time.Time
	late                                         []string // phones first asked for while the master was cut off
}

// runFailover runs the load over three otpgate processes through sz.cycles failovers.
func runFailover(t *testing.T, ha redisHA, wait int) {
	sz := failoverRunSize()
	p := newProvider(t)
	env := prodEnv(t, ha.url, testenv.PostgresDSN(t), p, map[string]string{
		"OTP_LIMIT_PHONE":         strconv.Itoa(phoneRule) + "/1h",
		"OTP_DUPLICATE_WINDOW":    "0s",
		"OTP_MAX_SENDS":           "50", // the phone rule binds, not a verification's budget
		"OTP_REDIS_TIMEOUT":       "1s",
		"OTP_REDIS_WAIT_REPLICAS": strconv.Itoa(wait),
	})
	servers := startServers(t, 3, env)
	client := newClient(t, true)

	// Phones whose keys live on the failing shard: early ones, at their limit long before
	// the kill; late ones per failover; and fresh ones, each asked for once, whose 201s
	// show the service working.
	phones := onShard(t, ha, sz.fresh+sz.early+sz.cycles*sz.perLate)
	early, phones := phones[:sz.early], phones[sz.early:]
	lateGroups := make([][]string, sz.cycles)
	for i := range lateGroups {
		lateGroups[i], phones = phones[:sz.perLate], phones[sz.perLate:]
	}
	fresh := phones
	var lateNow atomic.Pointer[[]string]
	var nextFresh atomic.Int64
	load := startLoad(client, sz.conc, func(i int) call {
		c := call{srv: servers[i%len(servers)], ip: fmt.Sprintf("10.66.%d.%d", i/250%250, 1+i%250), reqID: "fo-" + strconv.Itoa(i)}
		switch late := lateNow.Load(); {
		case i%4 == 0:
			c.phone = fresh[int(nextFresh.Add(1))%len(fresh)]
		case i%4 == 1 && late != nil:
			c.phone = (*late)[i/4%len(*late)]
		default:
			c.phone = early[i/4%len(early)]
		}
		return c
	})
	defer load.finish()
	atLimit := waitUntil(30*time.Second, func() bool {
		got := p.PerPhone()
		for _, ph := range early {
			if got[ph] < phoneRule {
				return false
			}
		}
		return true
	})
	if !atLimit {
		t.Fatalf("the early phones are not at their limit after 30s; so far %s", statuses(load.outcomes()))
	}
	waitSent(t, load, time.Time{}, 10)
	time.Sleep(sz.steady)

	cycles := make([]cycle, sz.cycles)
	for i := range cycles {
		c := &cycles[i]
		master, replica := ha.master(t), ha.replica(t)
		master.CutReplicas()
		c.cut, c.late = time.Now(), lateGroups[i]
		lateNow.Store(&c.late)
		time.Sleep(sz.lag)
		master.Stop() // SIGKILL: what only the master held is gone
		c.killed = time.Now()
		ha.failover(t, master, replica)
		c.failedOver = time.Now()
		ha.rejoin(t, master)
		c.rejoined = time.Now()
		if used := nextFresh.Load(); used >= int64(len(fresh)) {
			// Fresh phones asked for again are refused by the phone rule: no 201 could show recovery.
			t.Fatalf("the load used all %d fresh phones (%d asks) before failover %d; size the pool up", len(fresh), used, i+1)
		}
		c.recovered = waitSent(t, load, c.rejoined, 10)
		t.Logf("failover %d: master cut off from its replica for %v; failover took %v after the kill; rejoined %v later; sends recovered %v after that",
			i+1, c.killed.Sub(c.cut).Round(time.Millisecond), c.failedOver.Sub(c.killed).Round(time.Millisecond),
			c.rejoined.Sub(c.failedOver).Round(time.Millisecond), c.recovered.Sub(c.rejoined).Round(time.Millisecond))
		time.Sleep(sz.steady)
	}
	outs := load.finish()
	t.Logf("all sends: %s", statuses(outs))
	checkFailover(t, servers, p.PerPhone(), outs, cycles, wait > 0)
}

// onShard returns n distinct phones whose limiter keys live on the failing shard.
func onShard(t *testing.T, ha redisHA, n int) []string {
	var out []string
	for from := 0; len(out) < n; from += 3 * n {
		cands := make([]string, 3*n)
		for i := range cands {
			cands[i] = phone(5_000_000 + from + i)
		}
		for i, ok := range ha.onShard(t, cands) {
			if ok && len(out) < n {
				out = append(out, cands[i])
			}
		}
	}
	return out
}

// phoneUsed returns how many sends the limiter holds for phone in its phone rule, as the
// admin API reports them.
func (s *server) phoneUsed(t *testing.T, phone string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Admin+"/admin/api/limits?phone="+url.QueryEscape(phone), nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := metricsClient.Do(req)
	if err != nil {
		t.Fatalf("%s: GET /admin/api/limits: %v", s.name, err)
	}
	defer resp.Body.Close()
	var body struct {
		Rules []struct {
			Scope string `json:"scope"`
			Used  int    `json:"used"`
		} `json:"rules"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: GET /admin/api/limits: status %d, %v", s.name, resp.StatusCode, err)
	}
	for _, r := range body.Rules {
		if r.Scope == "phone" {
			return r.Used
		}
	}
	t.Fatalf("%s: no phone rule in the limits of %s", s.name, phone)
	return 0
}
