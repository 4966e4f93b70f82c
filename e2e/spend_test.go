package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/sms/smstest"
	"otpgate/internal/testenv"
)

// spendConfig prices every SMS at 0.05 and caps all sends at 1.00 a day, with a shadow
// budget of 0.50 a day beside it.
const spendConfig = `{"currency":"USD","prices":[{"channel":"sms","country":"*","price":"0.05"}],
	"budgets":[{"name":"cap","daily":"1.00","mode":"enforce"},{"name":"watch","daily":"0.50","mode":"shadow"}]}`

// TestSpendBudgetAcrossInstances is the proof of the spend budgets: three instances share
// one Redis and one database; the configuration set on one applies on all within two
// seconds; a send the provider refuses gives its reservation back; 200 concurrent sends
// across the instances against a daily cap of 1.00 at 0.05 each admit exactly 20 and
// refuse the rest as 429 budget_exceeded; the shadow budget of 0.50 refuses nothing and
// counts the 10 sends past it; each threshold of each budget arrives once.
func TestSpendBudgetAcrossInstances(t *testing.T) {
	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	rc := eventstest.New(t, eventsSecret)
	env := prodEnv(t, testenv.RedisURL(t), dsn, p, map[string]string{"OTP_EVENTS_POLL_INTERVAL": "20ms"})
	servers := startServers(t, 3, env)
	addEndpoint(t, servers[0], rc.URL)

	// Bad input first: 400 naming the field, and nothing changes.
	if code, body := spendPut(t, servers[1], `{"currency":"USD","prices":[{"channel":"sms","country":"*","price":"-1"}],"budgets":[]}`); code != http.StatusBadRequest ||
		!strings.Contains(body, `"prices[0].price"`) {
		t.Fatalf("bad price: got %d %s, want 400 naming prices[0].price", code, body)
	}
	set := time.Now()
	if code, body := spendPut(t, servers[0], spendConfig); code != http.StatusOK {
		t.Fatalf("PUT spend config: got %d %s", code, body)
	}
	for _, s := range servers {
		if !waitUntil(2*time.Second, func() bool { return spendApplied(t, s) }) {
			t.Fatalf("%s did not apply the configuration within 2s", s.name)
		}
	}
	t.Logf("every instance applied the configuration %v after it was set", time.Since(set).Round(time.Millisecond))

	// A send the provider refuses is refunded: the cap still admits 20 after it.
	client := newClient(t, true)
	p.Set(smstest.Reply{Status: http.StatusBadRequest})
	if o := doSend(t.Context(), client, call{srv: servers[2], phone: phone(999_999), ip: "198.51.100.1"}); o.status != http.StatusBadGateway {
		t.Fatalf("refused by the provider: got %d %s, want 502", o.status, o.code)
	}
	p.Set(smstest.Reply{})

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		bad      []string
	)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			s := servers[i%3]
			code, h, body := rawSend(t, client, s.API, phone(1000+i), fmt.Sprintf("203.0.113.%d", i%250))
			mu.Lock()
			defer mu.Unlock()
			statuses[code]++
			if code == http.StatusTooManyRequests {
				var pb struct {
					Code, Budget, Window, ResetsAt string
					RetryAfter                     int64 `json:"retry_after_seconds"`
				}
				_ = json.Unmarshal(body, &pb)
				pb.ResetsAt = jsonField(body, "resets_at")
				midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
				if pb.Code != "budget_exceeded" || pb.Budget != "cap" || pb.Window != "day" || pb.ResetsAt != midnight.Format(time.RFC3339) ||
					h.Get("Retry-After") != strconv.FormatInt(pb.RetryAfter, 10) || pb.RetryAfter < 1 {
					bad = append(bad, fmt.Sprintf("%s Retry-After %q", body, h.Get("Retry-After")))
				}
			}
		})
	}
	wg.Wait()
	if statuses[http.StatusCreated] != 20 || statuses[http.StatusTooManyRequests] != 180 {
		t.Errorf("got %v, want exactly 20 created and 180 refused", statuses)
	}
	for _, b := range bad[:min(len(bad), 3)] {
		t.Errorf("refusal: got %s, want budget_exceeded naming cap, day, the next UTC midnight and Retry-After", b)
	}

	// Each threshold of each budget once: cap and watch at 50, 80 and 100 %.
	if !rc.WaitFor(10*time.Second, func(evs []events.Event) bool { return len(thresholds(evs)) >= 6 }) {
		t.Fatalf("got thresholds %v, want 6", thresholds(rc.Events()))
	}
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show
	got := thresholds(rc.Events())
	want := map[string]int{"cap 50": 1, "cap 80": 1, "cap 100": 1, "watch 50": 1, "watch 80": 1, "watch 100": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("thresholds: got %v, want %v", got, want)
	}

	// The shadow budget counted the 10 sends past its 0.50 and refused none of them; the
	// history holds the cost of the 20 sends that went out.
	var shadow, spent float64
	for _, s := range servers {
		shadow += sumMetric(t, s, `otpgate_budget_shadow_total{budget="watch"}`)
		spent += sumMetric(t, s, `otpgate_spend_total{`)
	}
	if shadow != 10 || fmt.Sprintf("%.2f", spent) != "1.00" {
		t.Errorf("metrics: got %v shadow sends and %.4f spent, want 10 and 1.00", shadow, spent)
	}
	var flagged, cost int64
	query(t, dsn, `SELECT count(*) FILTER (WHERE shadow LIKE '%budget watch:day:%' AND status <> 'blocked'),
			coalesce(sum(cost) FILTER (WHERE status <> 'failed'), 0) FROM sends`,
		func(r pgx.Rows) error { return r.Scan(&flagged, &cost) })
	if flagged != 10 || cost != 1_000_000 {
		t.Errorf("history: got %d sends flagged by the shadow budget and %d micro-units spent, want 10 and 1000000", flagged, cost)
	}
}

// thresholds counts the budget.threshold events by budget and threshold.
func thresholds(evs []events.Event) map[string]int {
	out := map[string]int{}
	for _, ev := range evs {
		if ev.Type != events.BudgetThreshold {
			continue
		}
		var d events.BudgetThresholdData
		_ = json.Unmarshal(ev.Data, &d)
		out[fmt.Sprintf("%s %d", d.Budget, d.Threshold)]++
	}
	return out
}

func spendPut(t *testing.T, s *server, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, s.Admin+"/admin/api/spend/config", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// spendApplied reports whether s applies the stored spend configuration.
func spendApplied(t *testing.T, s *server) bool {
	req, _ := http.NewRequest(http.MethodGet, s.Admin+"/admin/api/spend/config", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Version        int64 `json:"version"`
		AppliedVersion int64 `json:"applied_version"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&c)
	return c.Version > 0 && c.AppliedVersion == c.Version
}

// rawSend posts one send and returns its status, headers and body.
func rawSend(t *testing.T, client *http.Client, api, phone, ip string) (int, http.Header, []byte) {
	body, _ := json.Marshal(map[string]string{"phone": phone})
	req, _ := http.NewRequest(http.MethodPost, api+"/v1/verifications", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// jsonField is one string member of a JSON object.
func jsonField(body []byte, name string) string {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	s, _ := m[name].(string)
	return s
}

// sumMetric adds up every series of s's /metrics whose line starts with prefix.
func sumMetric(t *testing.T, s *server, prefix string) float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.Admin+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := metricsClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			sum += f
		}
	}
	return sum
}
