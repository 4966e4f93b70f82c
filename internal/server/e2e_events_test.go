package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/apitest"
	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
)

const hookSecret = "whsec_test_0123456789abcdef"

// hookClient checks every admin exchange against the admin OpenAPI document.
func hookClient(t testing.TB) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: apitest.Transport(t, nil, apitest.Admin())}
}

// hookCall sends body (JSON, or a string as written) to the admin API, checked against the document.
func hookCall(t testing.TB, c *http.Client, in *instance, method, path string, body any) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, in.admin+path, rd)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: %d reply is not JSON: %q", method, path, resp.StatusCode, raw)
		}
	}
	return r
}

// eventsEnv makes delivery and expiry quick enough for tests.
func eventsEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		"OTP_EVENTS_POLL_INTERVAL": "20ms", "OTP_EVENTS_BACKOFF": "50ms", "OTP_EVENTS_BACKOFF_MAX": "200ms",
		"OTP_EVENTS_TIMEOUT": "2s", "OTP_EXPIRE_INTERVAL": "100ms", "OTP_DUPLICATE_WINDOW": "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// addHook subscribes url to types for app and returns the endpoint's id.
func addHook(t testing.TB, c *http.Client, in *instance, app, url string, types ...string) string {
	t.Helper()
	r := hookCall(t, c, in, http.MethodPost, "/admin/api/apps/"+app+"/webhooks", map[string]any{"url": url, "secret": hookSecret, "event_types": types})
	wantStatus(t, r, http.StatusCreated, "")
	if r.str("secret") != hookSecret || r.Header.Get("Location") == "" {
		t.Fatalf("got %s, want the endpoint with its secret and a Location", r.Raw)
	}
	return r.str("id")
}

// typesOf lists the types of the events about subject, in arrival order.
func typesOf(evs []events.Event, subject string) []string {
	var out []string
	for _, ev := range evs {
		if eventstest.Subject(ev) == subject {
			out = append(out, ev.Type)
		}
	}
	return out
}

func TestEvents(t *testing.T) {
	p := newProvider(t)
	rc := eventstest.New(t, hookSecret)
	inEnv := prodEnv(t, p, eventsEnv(map[string]string{"OTP_LIMIT_PHONE": "1/1h", "OTP_LIMIT_IP": "off"}))
	in := startServer(t, inEnv)
	c := hookClient(t)
	hooks := "/admin/api/apps/default/webhooks"

	t.Run("BadInputIsRefusedNamingTheFieldAndStoresNothing", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body  any
			field string
		}{
			"RelativeURL":  {map[string]any{"url": "/events", "event_types": []string{"verification.approved"}}, "url"},
			"FTP":          {map[string]any{"url": "ftp://example.com/", "event_types": []string{"verification.approved"}}, "url"},
			"Credentials":  {map[string]any{"url": "https://user:pass@example.com/", "event_types": []string{"verification.approved"}}, "url"},
			"NoTypes":      {map[string]any{"url": rc.URL, "event_types": []string{}}, "event_types"},
			"UnknownType":  {map[string]any{"url": rc.URL, "event_types": []string{"verification.opened"}}, "event_types"},
			"ShortSecret":  {map[string]any{"url": rc.URL, "secret": "short", "event_types": []string{"send.blocked"}}, "secret"},
			"SpaceySecret": {map[string]any{"url": rc.URL, "secret": "a secret with spaces", "event_types": []string{"send.blocked"}}, "secret"},
		} {
			r := hookCall(t, c, in, http.MethodPost, hooks, tc.body)
			wantStatus(t, r, http.StatusBadRequest, "invalid_request")
			if errs, _ := r.Body["errors"].(map[string]any); errs[tc.field] == nil {
				t.Errorf("%s: got %s, want errors naming %q", name, r.Raw, tc.field)
			}
		}
		for name, body := range map[string]string{"Malformed": `{"url":`, "UnknownField": `{"url":"http://x.test","event_types":["send.blocked"],"x":1}`, "Null": `{"url":null,"event_types":["send.blocked"]}`} {
			if r := hookCall(t, c, in, http.MethodPost, hooks, body); r.Status != http.StatusBadRequest {
				t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Raw)
			}
		}
		wantStatus(t, hookCall(t, c, in, http.MethodPost, "/admin/api/apps/0190aaaa-0000-7000-8000-00000000ffff/webhooks",
			map[string]any{"url": rc.URL, "event_types": []string{"send.blocked"}}), http.StatusNotFound, "not_found")
		r := hookCall(t, c, in, http.MethodGet, hooks, nil)
		wantStatus(t, r, http.StatusOK, "")
		if list, _ := r.Body["webhooks"].([]any); len(list) != 0 {
			t.Errorf("got %s, want no endpoints", r.Raw)
		}
	})

	ep := addHook(t, c, in, "default", rc.URL, events.Types()...)

	t.Run("AListedEndpointShowsNoSecret", func(t *testing.T) {
		r := hookCall(t, c, in, http.MethodGet, hooks, nil)
		wantStatus(t, r, http.StatusOK, "")
		if strings.Contains(r.Raw, hookSecret) || !strings.Contains(r.Raw, ep) {
			t.Errorf("got %s, want the endpoint without its secret", r.Raw)
		}
	})

	t.Run("AVerificationsEventsArriveInOrderAndARefusedSendIsOnlyBlocked", func(t *testing.T) {
		phone := newPhone()
		r := send(t, in, phone)
		wantStatus(t, r, http.StatusCreated, "")
		id := r.str("id")
		wantStatus(t, check(t, in, map[string]string{"id": id, "code": "000000"}), http.StatusUnprocessableEntity, "invalid_code")
		wantStatus(t, check(t, in, map[string]string{"id": id, "code": lastCode(t, p, phone)}), http.StatusOK, "")
		wantStatus(t, send(t, in, phone), http.StatusTooManyRequests, "rate_limited")
		want := []string{events.VerificationCreated, events.VerificationSent, events.VerificationApproved}
		ok := rc.WaitFor(10*time.Second, func(evs []events.Event) bool {
			return len(typesOf(evs, id)) == 3 && slices.ContainsFunc(evs, func(e events.Event) bool { return e.Type == events.SendBlocked })
		})
		got := rc.Events()
		if !ok || !slices.Equal(typesOf(got, id), want) {
			t.Fatalf("got %v for the verification, want %v, and a send.blocked", typesOf(got, id), want)
		}
		var blocked events.BlockedData
		for _, ev := range got {
			if ev.Type == events.SendBlocked {
				_ = json.Unmarshal(ev.Data, &blocked)
			}
		}
		if blocked.To != phone || blocked.Reason != "phone 1/1h" {
			t.Errorf("send.blocked: got %+v, want %s refused by phone 1/1h", blocked, phone)
		}
		if n := len(slices.DeleteFunc(got, func(e events.Event) bool { return e.Type != events.VerificationCreated })); n != 1 {
			t.Errorf("got %d verification.created, want 1: none for the refused send", n)
		}
	})

	t.Run("AnExpiredVerificationIsFoundByTheJob", func(t *testing.T) {
		// Another instance over the same database, whose codes last a second.
		env := prodEnv(t, p, eventsEnv(map[string]string{"OTP_CODE_TTL": "1s", "OTP_LIMIT_IP": "off"}))
		env["DATABASE_URL"], env["REDIS_URL"], env["OTP_REDIS_PREFIX"] = inEnv["DATABASE_URL"], inEnv["REDIS_URL"], inEnv["OTP_REDIS_PREFIX"]
		quick := startServer(t, env)
		phone := newPhone()
		r := send(t, quick, phone)
		wantStatus(t, r, http.StatusCreated, "")
		id := r.str("id")
		if !rc.WaitFor(10*time.Second, func(evs []events.Event) bool { return slices.Contains(typesOf(evs, id), events.VerificationExpired) }) {
			t.Fatalf("got %v, want verification.expired", typesOf(rc.Events(), id))
		}
		if got, want := typesOf(rc.Events(), id), []string{events.VerificationCreated, events.VerificationSent, events.VerificationExpired}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		v := hookCall(t, c, in, http.MethodGet, "/admin/api/verifications/"+id, nil)
		if v.Status != http.StatusOK || !strings.Contains(v.Raw, `"expired"`) {
			t.Errorf("verification: got %s, want expired", v.Raw)
		}
	})

	t.Run("TestSendDeliveriesAndRedeliver", func(t *testing.T) {
		r := hookCall(t, c, in, http.MethodPost, hooks+"/"+ep+"/test", nil)
		wantStatus(t, r, http.StatusOK, "")
		if r.Body["delivered"] != true || r.num("status") != 204 {
			t.Errorf("test send: got %s, want delivered with 204", r.Raw)
		}
		if !rc.WaitFor(5*time.Second, func(evs []events.Event) bool {
			return slices.ContainsFunc(evs, func(e events.Event) bool { return e.ID == r.str("event_id") && e.Type == events.WebhookTest })
		}) {
			t.Error("the receiver did not get the test event")
		}
		list := hookCall(t, c, in, http.MethodGet, hooks+"/"+ep+"/deliveries?status=delivered&limit=500", nil)
		wantStatus(t, list, http.StatusOK, "")
		ds, _ := list.Body["deliveries"].([]any)
		if len(ds) < 4 {
			t.Fatalf("got %s, want the delivered events", list.Raw)
		}
		first, _ := ds[0].(map[string]any)
		eid, _ := first["event_id"].(string)
		dups := rc.Duplicates()
		re := hookCall(t, c, in, http.MethodPost, hooks+"/"+ep+"/deliveries/"+eid+"/redeliver", nil)
		wantStatus(t, re, http.StatusOK, "")
		if re.str("status") != "pending" {
			t.Errorf("redeliver: got %s, want pending", re.Raw)
		}
		deadline := time.Now().Add(5 * time.Second)
		for rc.Duplicates() == dups && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if rc.Duplicates() != dups+1 {
			t.Errorf("duplicates: got %d, want %d: a redelivery is the same event again", rc.Duplicates(), dups+1)
		}
		for _, q := range []string{"?status=lost", "?limit=0", "?limit=501", "?limit=x"} {
			wantStatus(t, hookCall(t, c, in, http.MethodGet, hooks+"/"+ep+"/deliveries"+q, nil), http.StatusBadRequest, "invalid_request")
		}
		for _, path := range []string{hooks + "/" + ep + "/deliveries/not-an-id/redeliver", hooks + "/0190aaaa-0000-7000-8000-000000000000/test"} {
			wantStatus(t, hookCall(t, c, in, http.MethodPost, path, nil), http.StatusNotFound, "not_found")
		}
	})

	t.Run("DeleteStopsDeliveries", func(t *testing.T) {
		other := eventstest.New(t, hookSecret)
		id := addHook(t, c, in, "default", other.URL, events.VerificationCreated)
		wantStatus(t, hookCall(t, c, in, http.MethodDelete, hooks+"/"+id, nil), http.StatusNoContent, "")
		wantStatus(t, hookCall(t, c, in, http.MethodDelete, hooks+"/"+id, nil), http.StatusNotFound, "not_found")
		phone := newPhone()
		r := send(t, in, phone)
		wantStatus(t, r, http.StatusCreated, "")
		if !rc.WaitFor(5*time.Second, func(evs []events.Event) bool { return len(typesOf(evs, r.str("id"))) >= 1 }) {
			t.Fatal("the remaining endpoint got nothing")
		}
		if n := other.Requests(); n != 0 {
			t.Errorf("the deleted endpoint got %d deliveries, want none", n)
		}
	})
}

func TestEventsInDevMode(t *testing.T) {
	rc := eventstest.New(t, hookSecret)
	env := eventsEnv(map[string]string{"ADMIN_TOKEN": testAdminToken})
	in := startServer(t, env)
	c := hookClient(t)
	addHook(t, c, in, "default", rc.URL, events.VerificationCreated, events.VerificationSent)
	r := send(t, in, newPhone())
	wantStatus(t, r, http.StatusCreated, "")
	if !rc.WaitFor(10*time.Second, func(evs []events.Event) bool { return len(typesOf(evs, r.str("id"))) == 2 }) {
		t.Fatalf("got %v, want created and sent", typesOf(rc.Events(), r.str("id")))
	}
	if got := typesOf(rc.Events(), r.str("id")); !slices.Equal(got, []string{events.VerificationCreated, events.VerificationSent}) {
		t.Errorf("got %v, want created then sent", got)
	}
}
