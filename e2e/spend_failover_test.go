package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/testenv"
)

// The budget of the failover runs: 1.00 a day at 0.05 an SMS, 20 sends, in micro-units.
const (
	failoverCap   = 1_000_000
	failoverPrice = 50_000
)

// TestSpendBudgetFailover kills the Sentinel master while sends spend a budget and checks
// that, with OTP_REDIS_WAIT_REPLICAS=1, what was accepted never passes the cap by more
// than one message's price: counted from the 201s, from the messages the provider
// received, and from history. Half the budget is spent before the run; then the master is
// cut off from its replica, as by a partition, while concurrent sends from fresh numbers
// and addresses spend the rest on it; it is killed, the replica promoted, and the sends go
// on until the budget refuses them. Without waiting, the run reports what the failover let
// through: the spend the dead master alone held is forgotten and spent again.
func TestSpendBudgetFailover(t *testing.T) {
	for _, wait := range []int{1, 0} {
		t.Run(fmt.Sprintf("WaitReplicas=%d", wait), func(t *testing.T) { runSpendFailover(t, wait) })
	}
}

func runSpendFailover(t *testing.T, wait int) {
	ha := sentinelHA(t)
	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	env := prodEnv(t, ha.url, dsn, p, map[string]string{
		// Every send is a fresh number from a fresh address: only the budget binds.
		"OTP_DUPLICATE_WINDOW": "0s",
		// Longer than the cut, so the sends made while the master is cut off are still
		// waiting for their replica when it is killed, and the undo of each (a second more)
		// outlasts the failover: it reaches the new master, which must not take back what
		// it never held.
		"OTP_REDIS_TIMEOUT":       "3s",
		"OTP_REDIS_WAIT_REPLICAS": strconv.Itoa(wait),
	})
	servers := startServers(t, 3, env)
	cfg := fmt.Sprintf(`{"currency":"USD","prices":[{"channel":"sms","country":"*","price":"0.05"}],
		"budgets":[{"name":"cap","daily":"1.00","mode":"enforce","time_zone":%q}]}`, noonZone(time.Now()))
	if code, body := spendPut(t, servers[0], cfg); code != http.StatusOK {
		t.Fatalf("PUT spend config: got %d %s", code, body)
	}
	for _, s := range servers {
		if !waitUntil(5*time.Second, func() bool { return spendApplied(t, s) }) {
			t.Fatalf("%s did not apply the configuration within 5s", s.name)
		}
	}
	client := newClient(t, true)
	var n atomic.Int64
	next := func() call {
		i := int(n.Add(1)) - 1
		return call{srv: servers[i%len(servers)], phone: phone(7_000_000 + i),
			ip: fmt.Sprintf("10.77.%d.%d", i/250%250, 1+i%250), reqID: "sf-" + strconv.Itoa(i)}
	}

	// Half the budget, replicated before anything fails.
	var before []call
	for range failoverCap / failoverPrice / 2 {
		before = append(before, next())
	}
	outs := runCalls(client, before, 4)
	for _, o := range outs {
		if o.err != nil || o.status != http.StatusCreated {
			t.Fatalf("before the failover: got %d %s (%v), want 201", o.status, o.code, o.err)
		}
	}

	master, replica := ha.master(t), ha.replica(t)
	master.CutReplicas()
	cut := time.Now()
	load := startLoad(client, 8, func(int) call { return next() })
	defer load.finish()
	time.Sleep(700 * time.Millisecond)
	master.Stop() // SIGKILL: what only the master held is gone
	killed := time.Now()
	ha.failover(t, master, replica)
	failedOver := time.Now()
	ha.rejoin(t, master)
	rejoined := time.Now()
	// Recovered: a send started after the rejoin was decided by the new master; the sends
	// go on until one started later than that is refused by the budget.
	var refusedAt time.Time
	if !waitUntil(30*time.Second, func() bool {
		for _, o := range load.outcomes() {
			if o.status == http.StatusTooManyRequests && o.code == "budget_exceeded" && o.start.After(rejoined) {
				refusedAt = o.start
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no send refused by the budget within 30s of the rejoin; so far %s", statuses(load.outcomes()))
	}
	time.Sleep(500 * time.Millisecond)
	outs = append(outs, load.finish()...)
	t.Logf("cut for %v; failover took %v; rejoined %v later; the budget refused again %v after that; all sends: %s",
		killed.Sub(cut).Round(time.Millisecond), failedOver.Sub(killed).Round(time.Millisecond),
		rejoined.Sub(failedOver).Round(time.Millisecond), refusedAt.Sub(rejoined).Round(time.Millisecond), statuses(outs))

	admitted := 0
	for _, o := range outs {
		switch {
		case o.err == nil && o.invalid == "" && o.status == http.StatusCreated:
			admitted++
		case o.err == nil && o.invalid == "" && (o.status == http.StatusTooManyRequests && o.code == "budget_exceeded" ||
			o.status == http.StatusServiceUnavailable && o.code == "unavailable"):
		default:
			t.Errorf("%s %s at %s: got %d %s (err %v, %s), want 201, 429 budget_exceeded or 503 unavailable",
				o.srv.name, o.phone, o.start.Format(time.StampMilli), o.status, o.code, o.err, o.invalid)
		}
	}
	sms := 0
	for ph, k := range p.PerPhone() {
		sms += k
		if k != 1 {
			t.Errorf("%s: got %d SMS, want 1", ph, k)
		}
	}
	if sms != admitted {
		t.Errorf("the provider received %d SMS for %d admitted sends", sms, admitted)
	}
	var spent int64
	query(t, dsn, `SELECT coalesce(sum(cost) FILTER (WHERE status <> 'failed' AND status <> 'blocked'), 0) FROM sends`,
		func(r pgx.Rows) error { return r.Scan(&spent) })

	bound := int64(failoverCap + failoverPrice)
	money := func(micros int64) string { return fmt.Sprintf("%d.%02d", micros/1_000_000, micros%1_000_000/10_000) }
	figures := []struct {
		what   string
		micros int64
	}{
		{"the 201s", int64(admitted) * failoverPrice},
		{"the provider's messages", int64(sms) * failoverPrice},
		{"history", spent},
	}
	for _, f := range figures {
		switch {
		case f.micros <= bound:
			t.Logf("WaitReplicas=%d: spent by %s: %s of a cap of %s", wait, f.what, money(f.micros), money(failoverCap))
		case wait > 0:
			t.Errorf("spent by %s: %s, want at most %s (the cap %s and one message)", f.what, money(f.micros), money(bound), money(failoverCap))
		default:
			t.Logf("WaitReplicas=0: spent by %s: %s, past the cap of %s by %s: the failover forgot what the dead master alone held",
				f.what, money(f.micros), money(failoverCap), money(f.micros-failoverCap))
		}
	}
}

// noonZone returns a fixed-offset zone in which t is about noon, so a daily window started
// in it does not reset during a run, whenever the run is.
func noonZone(t time.Time) string {
	n := t.UTC().Hour() - 12 // Etc/GMT+n is n hours behind UTC
	switch {
	case n == 0:
		return "Etc/GMT"
	case n > 0:
		return "Etc/GMT+" + strconv.Itoa(n)
	default:
		return "Etc/GMT" + strconv.Itoa(n)
	}
}
