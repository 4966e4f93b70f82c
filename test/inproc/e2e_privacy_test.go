package inproc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"otpgate/internal/email/emailtest"
	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv"
)

// person is one user of the privacy test: a number and an email address.
type person struct{ phone, email string }

// traces are what must not be found of p once it is erased (and, but for the index,
// never in Redis): the number, its digits alone, the address and each one's index.
func (p person) traces(t *testing.T) []string {
	return []string{p.phone, p.phone[1:], p.email, servertest.AddressIndex(t, p.phone), servertest.AddressIndex(t, p.email)}
}

// privacyRun is one production server with every way an address reaches Redis and
// PostgreSQL: SMS and email, the default app and a key app with rules of its own, the
// Twilio API, Idempotency-Key retries, a refused send, events and their deliveries.
type privacyRun struct {
	in       *servertest.Instance
	sms      interface{ LastCode(string) string }
	mb       *emailtest.Mailbox
	rc       *eventstest.Receiver
	dsn      string
	rdb      *redis.Client
	prefix   string
	app      string
	key, sec string
}

func startPrivacyRun(t *testing.T) *privacyRun {
	p := servertest.NewProvider(t)
	mb := emailtest.New(t, emailtest.STARTTLS, nil)
	r := &privacyRun{sms: p, mb: mb, rc: eventstest.New(t, servertest.HookSecret), dsn: testenv.PostgresDSN(t), prefix: testenv.KeyPrefix(t)}
	redisURL := testenv.RedisURL(t)
	r.in = servertest.Start(t, servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{
		"DATABASE_URL": r.dsn, "REDIS_URL": redisURL, "OTP_REDIS_PREFIX": r.prefix,
		"SMTP_URL":  "smtp://otpgate:s3cret%20pass@" + mb.Addr,
		"SMTP_FROM": "Example <no-reply@example.com>", "SMTP_CA_FILE": mb.CAFile,
		"OTP_LIMIT_PHONE": "10/1h", "OTP_LIMIT_IP": "off", "OTP_DUPLICATE_WINDOW": "1h",
		"OTP_FRAUD_GUARD": "shadow",
	})))
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	r.rdb = redis.NewClient(opt)
	t.Cleanup(func() { _ = r.rdb.Close() })
	addHook(t, hookClient(t), r.in, "default", r.rc.URL, events.Types()...)
	r.app = servertest.CreateApp(t, r.in, map[string]any{"name": "Shop", "access": "key", "send_rules": "5/1h", "check_rules": "5/1h"})
	r.key, r.sec = servertest.CreateKey(t, r.in, r.app, false)
	return r
}

// use sends and checks codes for u every way there is.
func (r *privacyRun) use(t *testing.T, u person) {
	t.Helper()
	in := r.in
	// An Idempotency-Key retry replays the stored response; a second send from the same
	// client within the duplicate window is refused and recorded as such.
	for range 2 {
		servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/verifications", map[string]string{"phone": u.phone}, "Idempotency-Key", "k-"+u.phone[1:]), http.StatusCreated, "")
	}
	servertest.WantStatus(t, servertest.Send(t, in, u.phone), http.StatusConflict, "duplicate_submit")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": u.phone, "code": "000000"}), http.StatusUnprocessableEntity, "")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": u.phone, "code": r.sms.LastCode(u.phone)}), http.StatusOK, "")

	servertest.WantStatus(t, servertest.Post(t, in.API+"/v1/verifications", map[string]string{"email": u.email}, "Idempotency-Key", "k-"+u.email), http.StatusCreated, "")
	_, code := mailCode(t, r.mb, u.email)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"email": u.email, "code": code}), http.StatusOK, "")

	servertest.WantStatus(t, servertest.AppSend(t, in, r.app, u.phone, "Authorization", "Bearer "+r.sec, "User-Agent", "rest-client"), http.StatusCreated, "")
	svc := "/v2/Services/VA" + strings.ReplaceAll(r.app, "-", "")
	if status, body := twilioCall(t, in, r.key, r.sec, http.MethodPost, svc+"/Verifications", url.Values{"To": {u.phone}, "Channel": {"sms"}}, ""); status != http.StatusCreated {
		t.Fatalf("Twilio send: %d %v", status, body)
	}
	if status, body := twilioCall(t, in, r.key, r.sec, http.MethodPost, svc+"/VerificationCheck", url.Values{"To": {u.phone}, "Code": {r.sms.LastCode(u.phone)}}, ""); status != http.StatusOK || body["status"] != "approved" {
		t.Fatalf("Twilio check: %d %v", status, body)
	}
}

// sends is how many sends the history holds of address, as the admin API lists them.
func (r *privacyRun) sends(t *testing.T, address string) int {
	t.Helper()
	res := servertest.AdminCall(t, r.in, http.MethodGet, "/admin/api/sends?limit=100&phone="+url.QueryEscape(address), nil)
	servertest.WantStatus(t, res, http.StatusOK, "")
	list, _ := res.Body["sends"].([]any)
	return len(list)
}

// redisText is every key under the run's prefix with its value, whatever its type.
func (r *privacyRun) redisText(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	iter := r.rdb.Scan(ctx, 0, r.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		typ, err := r.rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		switch typ {
		case "string":
			var sv string
			sv, err = r.rdb.Get(ctx, k).Result()
			v = sv + decoded(sv)
		case "hash":
			v, err = r.rdb.HGetAll(ctx, k).Result()
		case "set":
			v, err = r.rdb.SMembers(ctx, k).Result()
		case "zset":
			v, err = r.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "list":
			v, err = r.rdb.LRange(ctx, k, 0, -1).Result()
		case "stream":
			v, err = r.rdb.XRange(ctx, k, "-", "+").Result()
		case "none":
			continue // expired meanwhile
		default:
			t.Fatalf("key %s: type %s the test cannot read", k, typ)
		}
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %v\n", k, typ, v)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// decoded is what the base64 strings of a JSON object decode to, as encoding/json writes
// []byte: a stored response's body would otherwise hide in plain sight.
func decoded(v string) string {
	var m map[string]any
	if json.Unmarshal([]byte(v), &m) != nil {
		return ""
	}
	var b strings.Builder
	for _, x := range m {
		if s, ok := x.(string); ok {
			if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
				b.WriteString(" " + string(raw))
			}
		}
	}
	return b.String()
}

// postgresText is every row of every table of the run's database, cast to text.
func (r *privacyRun) postgresText(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("tables %v, %v", tables, err)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range texts {
			fmt.Fprintf(&b, "%s: %s\n", table, x)
		}
	}
	return b.String()
}

// wantNone fails for every trace found in text, showing the line it is on.
func wantNone(t *testing.T, where, text string, traces ...string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		for _, x := range traces {
			if x != "" && strings.Contains(line, x) {
				t.Errorf("%s holds %q: %s", where, x, line)
			}
		}
	}
}

// TestPersonalData drives the production server over PostgreSQL and Redis through every
// way an address reaches them, for two people; Redis then holds neither's number (nor its
// digits) nor address, in any key or value. Erasing one of them by number and by address
// leaves no trace of that person in any table or any Redis key or value (not the number,
// its digits, the address nor their indexes), and the other's history as it was.
func TestPersonalData(t *testing.T) {
	r := startPrivacyRun(t)
	ann := person{phone: servertest.PhoneFor(1_000_001), email: "ann.privacy@example.com"}
	bob := person{phone: servertest.PhoneFor(1_000_002), email: "bob.privacy@example.com"}
	r.use(t, ann)
	r.use(t, bob)
	// Both people's events reach the receiver: their delivery records are written.
	if !r.rc.WaitFor(30*time.Second, func(evs []events.Event) bool {
		var a, b bool
		for _, ev := range evs {
			a = a || strings.Contains(string(ev.Data), ann.phone)
			b = b || strings.Contains(string(ev.Data), bob.phone)
		}
		return a && b
	}) {
		t.Fatalf("the receiver got no events of both people")
	}
	// The refused sends are written in batches: wait until the history holds them.
	want := map[string]int{}
	for _, u := range []person{ann, bob} {
		deadline := time.Now().Add(30 * time.Second)
		for r.sends(t, u.phone) < 4 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		want[u.phone], want[u.email] = r.sends(t, u.phone), r.sends(t, u.email)
		if want[u.phone] != 4 || want[u.email] != 1 {
			t.Fatalf("history of %v: %d and %d sends, want 4 and 1", u, want[u.phone], want[u.email])
		}
	}

	t.Run("RedisHoldsNoAddress", func(t *testing.T) {
		text := r.redisText(t)
		if !strings.Contains(text, servertest.AddressIndex(t, ann.phone)) || !strings.Contains(text, "idem:") {
			t.Fatalf("Redis holds neither the limiter keys nor the stored responses the test looks through:\n%s", text)
		}
		for _, u := range []person{ann, bob} {
			wantNone(t, "Redis", text, u.phone, u.phone[1:], u.email, strings.Split(u.email, "@")[0])
		}
	})

	t.Run("EraseOnePerson", func(t *testing.T) {
		for _, subject := range []string{ann.phone, ann.email} {
			res := servertest.AdminCall(t, r.in, http.MethodDelete, "/admin/api/subjects/"+url.PathEscape(subject), nil)
			servertest.WantStatus(t, res, http.StatusOK, "")
			removed, _ := res.Body["removed"].(map[string]any)
			if removed["verifications"].(float64) == 0 || removed["sends"].(float64) == 0 || removed["limiter_keys"].(float64) == 0 ||
				removed["stored_responses"].(float64) == 0 || strings.Contains(res.Raw, subject) {
				t.Errorf("erase %s: got %s, want verifications, sends, limiter keys and stored responses removed and the subject masked", subject, res.Raw)
			}
		}
		servertest.WantStatus(t, servertest.AdminCall(t, r.in, http.MethodDelete, "/admin/api/subjects/not-an-address", nil), http.StatusBadRequest, "invalid_request")

		wantNone(t, "PostgreSQL", r.postgresText(t), ann.traces(t)...)
		wantNone(t, "Redis", r.redisText(t), ann.traces(t)...)
		for _, a := range []string{ann.phone, ann.email} {
			if n := r.sends(t, a); n != 0 {
				t.Errorf("history of %s: %d sends after the erasure, want none", a, n)
			}
		}
		for _, a := range []string{bob.phone, bob.email} {
			if n := r.sends(t, a); n != want[a] {
				t.Errorf("history of %s: %d sends, want the %d it had", a, n, want[a])
			}
		}
		if text := r.redisText(t); !strings.Contains(text, servertest.AddressIndex(t, bob.phone)) {
			t.Errorf("Redis lost the limiter keys of the person not erased:\n%s", text)
		}
		log := servertest.AdminCall(t, r.in, http.MethodGet, "/admin/api/audit?action=subject_erased", nil)
		if entries, _ := log.Body["entries"].([]any); len(entries) != 2 {
			t.Errorf("audit: got %s, want the two erasures", log.Raw)
		}
		// Ann can use the service again, as a new user. The duplicate window's keys hash
		// her index with the client, so they cannot be found and are left to expire: a
		// send from the client she used within the window is still a duplicate.
		servertest.WantStatus(t, servertest.Send(t, r.in, ann.phone, "User-Agent", "another-device"), http.StatusCreated, "")
	})
}
