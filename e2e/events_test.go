package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/testenv"
)

const eventsSecret = "whsec_e2e_0123456789abcdef"

// Phones whose changes the database refuses (a trigger the test adds): a send whose
// verification.created cannot be written, and a check whose verification.approved cannot.
const (
	rolledBackSends = "+8190999800"
	rolledBackCheck = "+819099910001"
)

// TestEventsDeliveredExactlyOnce is the proof of event delivery. Three instances share one
// Redis and one database; an endpoint is down while verifications are created, sent,
// refused, approved and left to expire; it then answers 500 to the first delivery of about
// a third of the events, and holds the deliveries of every instance until one of them is
// killed (SIGKILL) with deliveries in flight; that instance restarts. The deduplicating
// receiver must end up with exactly the events the database's committed changes report,
// each once, in order per verification, and none for a change that rolled back.
func TestEventsDeliveredExactlyOnce(t *testing.T) {
	p := newProvider(t)
	dsn := testenv.PostgresDSN(t)
	rc := eventstest.New(t, eventsSecret)
	rc.Down()
	rc.FailFirst(func(ev events.Event) bool { return strings.IndexByte("01234", ev.ID[0]) >= 0 })
	env := prodEnv(t, testenv.RedisURL(t), dsn, p, map[string]string{
		// Long enough that a check right after its send, on a loaded machine under -race, still
		// finds the code; short enough that the workload's unchecked codes expire in the test.
		"OTP_CODE_TTL": "5s", "OTP_LIMIT_PHONE": "1/1h", "OTP_DUPLICATE_WINDOW": "0",
		"OTP_EVENTS_POLL_INTERVAL": "20ms", "OTP_EVENTS_BACKOFF": "50ms", "OTP_EVENTS_BACKOFF_MAX": "500ms",
		"OTP_EVENTS_TIMEOUT": "2s", "OTP_EXPIRE_INTERVAL": "100ms",
	})
	servers := startServers(t, 3, env)
	refuseEvents(t, dsn)
	addEndpoint(t, servers[0], rc.URL)

	// The endpoint is down meanwhile.
	const n = 99
	w := runVerifications(t, servers, p, n)
	if !waitUntil(15*time.Second, func() bool { return pendingVerifications(t, dsn) == 0 }) {
		t.Fatalf("verifications still pending 15s after the workload")
	}

	// Up again, holding every delivery: with more than 64 held (two instances' rounds of
	// 32 at most), every instance has deliveries in flight when the second one is killed.
	rc.Hold()
	rc.Up()
	if !waitUntil(10*time.Second, func() bool { return rc.InFlight() > 2*events.DefaultBatch }) {
		t.Fatalf("only %d deliveries in flight, want more than %d", rc.InFlight(), 2*events.DefaultBatch)
	}
	held := rc.InFlight()
	servers[1].Kill()
	rc.Release()
	restarted := startServer(t, env)

	want := expectedEvents(t, dsn)
	if !waitUntil(25*time.Second, func() bool { return len(rc.Events()) >= len(want) && outboxSettled(t, dsn) }) {
		t.Fatalf("got %d of %d events; outbox: %s", len(rc.Events()), len(want), outboxState(t, dsn))
	}
	got := rc.Events()

	// Exactly the committed changes, each once.
	ids := map[string]events.Event{}
	for _, ev := range got {
		ids[ev.ID] = ev
		if _, ok := want[ev.ID]; !ok {
			t.Errorf("unexpected event %s %s %s", ev.ID, ev.Type, ev.Data)
		}
	}
	for id, typ := range want {
		if _, ok := ids[id]; !ok {
			t.Errorf("missing event %s %s", id, typ)
		}
	}
	if len(ids) != len(got) {
		t.Errorf("the receiver kept %d events for %d ids", len(got), len(ids))
	}
	// In order per verification: opened, then its sends, then what closed it.
	order := map[string][]string{}
	for _, ev := range got {
		if ev.Type != events.SendBlocked {
			order[eventstest.Subject(ev)] = append(order[eventstest.Subject(ev)], ev.Type)
		}
	}
	for v, types := range order {
		if len(types) != 3 || types[0] != events.VerificationCreated || types[1] != events.VerificationSent ||
			(types[2] != events.VerificationApproved && types[2] != events.VerificationExpired) {
			t.Errorf("verification %s: got %v, want created, sent, then approved or expired", v, types)
		}
	}
	// Nothing of the changes that rolled back; the refused sends are only send.blocked.
	for _, ev := range got {
		var d events.VerificationData
		_ = json.Unmarshal(ev.Data, &d)
		if strings.HasPrefix(d.To, rolledBackSends) || (d.To == rolledBackCheck && ev.Type == events.VerificationApproved) {
			t.Errorf("event of a rolled-back change: %s %s", ev.Type, ev.Data)
		}
	}
	count := map[string]int{}
	for _, ev := range got {
		count[ev.Type]++
	}
	if count[events.SendBlocked] != w.refused || count[events.VerificationCreated] != w.created ||
		count[events.VerificationApproved] != w.approved-1 || count[events.VerificationExpired] != w.created-w.approved+1 {
		t.Errorf("got %v; want %d created and sent, %d approved, %d expired, %d send.blocked",
			count, w.created, w.approved-1, w.created-w.approved+1, w.refused)
	}
	if rc.Refused() == 0 || rc.Duplicates() == 0 {
		t.Errorf("receiver refused %d and dropped %d duplicates; want some of each (500s, and deliveries of the killed instance)", rc.Refused(), rc.Duplicates())
	}
	var delivered, retried float64
	for _, s := range []*server{servers[0], servers[2], restarted} {
		delivered += s.metric(t, "otpgate_events_delivered_total")
		retried += s.metric(t, "otpgate_events_retried_total")
	}
	t.Logf("events: %d distinct, %v by type; deliveries: %d requests, %d answered 500 (first delivery of chosen events), "+
		"%d duplicates dropped; %d held when server2 was killed; surviving and restarted instances: %.0f delivered, %.0f retried; "+
		"sends: %d created, %d refused, %d rolled back; checks: %d approved, 1 rolled back",
		len(got), count, rc.Requests(), rc.Refused(), rc.Duplicates(), held, delivered, retried,
		w.created, w.refused, w.rolledBack, w.approved-1)
}

// refuseEvents makes the database refuse the event rows of the rolled-back phones, so the
// changes they report roll back with them.
func refuseEvents(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The rows hold each phone sealed, with its keyed index in phone (docs/privacy.md):
	// the trigger knows the phones by their indexes, through the event's verification.
	var sends []string
	for i := range 3 {
		sends = append(sends, "'"+stored(t, fmt.Sprintf("%s%02d", rolledBackSends, i))+"'")
	}
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF (NEW.type = 'verification.created' AND EXISTS (
					SELECT 1 FROM verifications v WHERE v.id = NEW.subject AND v.phone IN (%s)))
				OR (NEW.type = 'verification.approved' AND EXISTS (
					SELECT 1 FROM verifications v WHERE v.id = NEW.subject AND v.phone = '%s')) THEN
				RAISE EXCEPTION 'test: this change rolls back';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER test_refuse_event AFTER INSERT ON event_outbox FOR EACH ROW EXECUTE FUNCTION test_refuse_event();`,
		strings.Join(sends, ", "), stored(t, rolledBackCheck)))
	if err != nil {
		t.Fatal(err)
	}
}

func addEndpoint(t *testing.T, s *server, url string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"url": url, "secret": eventsSecret, "event_types": events.Types()})
	req, _ := http.NewRequest(http.MethodPost, s.Admin+"/admin/api/apps/default/webhooks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("add endpoint: got %d, want 201", resp.StatusCode)
	}
}

// workload is what runVerifications did.
type workload struct{ created, refused, approved, rolledBack int }

// runVerifications creates n verifications across the servers; every third is asked for
// again (refused by the phone's 1/1h), every other one approved (one of them by a check
// that rolls back), the rest left to expire; and three sends roll back.
func runVerifications(t *testing.T, servers []*server, p interface{ LastCode(string) string }, n int) workload {
	t.Helper()
	client := newClient(t, true)
	post := func(s *server, path string, body map[string]string) (int, map[string]any) {
		raw, _ := json.Marshal(body)
		resp, err := client.Post(s.API+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Errorf("POST %s: %v", path, err)
			return 0, nil
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	var (
		mu sync.Mutex
		w  workload
		wg sync.WaitGroup
	)
	count := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	for i := range n {
		wg.Go(func() {
			s, phone := servers[i%len(servers)], fmt.Sprintf("+8190999%05d", 10_000+i)
			if i == 1 {
				phone = rolledBackCheck
			}
			if st, _ := post(s, "/v1/verifications", map[string]string{"phone": phone}); st != http.StatusCreated {
				t.Errorf("send %s: got %d, want 201", phone, st)
				return
			}
			count(func() { w.created++ })
			if i%3 == 0 {
				if st, _ := post(servers[(i+1)%len(servers)], "/v1/verifications", map[string]string{"phone": phone}); st != http.StatusTooManyRequests {
					t.Errorf("second send %s: got %d, want 429", phone, st)
				}
				count(func() { w.refused++ })
			}
			if i%2 == 1 {
				st, _ := post(servers[(i+2)%len(servers)], "/v1/verifications/check", map[string]string{"phone": phone, "code": p.LastCode(phone)})
				if want := map[bool]int{true: http.StatusInternalServerError, false: http.StatusOK}[phone == rolledBackCheck]; st != want {
					t.Errorf("check %s: got %d, want %d", phone, st, want)
				}
				count(func() { w.approved++ })
			}
		})
	}
	for i := range 3 {
		phone := fmt.Sprintf("%s%02d", rolledBackSends, i)
		if st, _ := post(servers[i], "/v1/verifications", map[string]string{"phone": phone}); st != http.StatusInternalServerError {
			t.Errorf("send %s: got %d, want 500: its event cannot be written", phone, st)
		}
		w.rolledBack++
	}
	wg.Wait()
	return w
}

func pendingVerifications(t *testing.T, dsn string) int {
	var n int
	query(t, dsn, `SELECT count(*) FROM verifications WHERE status = 'pending'`, func(r pgx.Rows) error { return r.Scan(&n) })
	return n
}

// expectedEvents derives, from the committed rows, every event the database must have
// reported, by id: what every verification and send went through, and nothing of the
// rolled-back changes, which left no rows.
func expectedEvents(t *testing.T, dsn string) map[string]string {
	t.Helper()
	want := map[string]string{}
	add := func(typ, key string) { want[events.EventID(typ, key)] = typ }
	keys := dataKeys(t)
	query(t, dsn, `SELECT id::text, status, phone_sealed FROM verifications`, func(r pgx.Rows) error {
		var id, status, sealed string
		if err := r.Scan(&id, &status, &sealed); err != nil {
			return err
		}
		phone, err := keys.Open(sealed)
		if err != nil {
			return err
		}
		if strings.HasPrefix(phone, rolledBackSends) {
			t.Errorf("verification %s of a rolled-back send was kept", phone)
		}
		add(events.VerificationCreated, id)
		add("verification."+status, id)
		return nil
	})
	query(t, dsn, `SELECT id::text, status FROM sends`, func(r pgx.Rows) error {
		var id, status string
		if err := r.Scan(&id, &status); err != nil {
			return err
		}
		switch status {
		case "sent":
			add(events.VerificationSent, id)
		case "blocked":
			add(events.SendBlocked, id)
		default:
			t.Errorf("send %s: status %s, want sent or blocked", id, status)
		}
		return nil
	})
	return want
}

// outboxSettled reports whether every event row is delivered.
func outboxSettled(t *testing.T, dsn string) bool {
	var undelivered int
	query(t, dsn, `SELECT count(*) FROM event_outbox WHERE status <> 'delivered'`, func(r pgx.Rows) error { return r.Scan(&undelivered) })
	return undelivered == 0
}

func outboxState(t *testing.T, dsn string) string {
	var out []string
	query(t, dsn, `SELECT status, count(*), max(attempts) FROM event_outbox GROUP BY 1 ORDER BY 1`, func(r pgx.Rows) error {
		var status string
		var n, attempts int
		if err := r.Scan(&status, &n, &attempts); err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d (at most %d attempts)", status, n, attempts))
		return nil
	})
	slices.Sort(out)
	return strings.Join(out, ", ")
}
