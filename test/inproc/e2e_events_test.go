package inproc

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
	"otpgate/internal/server/servertest"
)

// hookClient checks every admin exchange against the admin OpenAPI document.
func hookClient(t testing.TB) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: apitest.Transport(t, nil, apitest.Admin())}
}

// hookCall sends body (JSON, or a string as written) to the admin API, checked against the document.
func hookCall(t testing.TB, c *http.Client, in *servertest.Instance, method, path string, body any) servertest.Reply {
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
	req, _ := http.NewRequest(method, in.Admin+path, rd)
	req.Header.Set("Authorization", "Bearer "+servertest.TestAdminToken)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := servertest.Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: %d reply is not JSON: %q", method, path, resp.StatusCode, raw)
		}
	}
	return r
}

// addHook subscribes url to types for app and returns the endpoint's id.
func addHook(t testing.TB, c *http.Client, in *servertest.Instance, app, url string, types ...string) string {
	t.Helper()
	r := hookCall(t, c, in, http.MethodPost, "/admin/api/apps/"+app+"/webhooks", map[string]any{"url": url, "secret": servertest.HookSecret, "event_types": types})
	servertest.WantStatus(t, r, http.StatusCreated, "")
	if r.Str("secret") != servertest.HookSecret || r.Header.Get("Location") == "" {
		t.Fatalf("got %s, want the endpoint with its secret and a Location", r.Raw)
	}
	return r.Str("id")
}

func TestEvents(t *testing.T) {
	p := servertest.NewProvider(t)
	rc := eventstest.New(t, servertest.HookSecret)
	inEnv := servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{"OTP_LIMIT_PHONE": "1/1h", "OTP_LIMIT_IP": "off"}))
	in := servertest.Start(t, inEnv)
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
			servertest.WantStatus(t, r, http.StatusBadRequest, "invalid_request")
			if errs, _ := r.Body["errors"].(map[string]any); errs[tc.field] == nil {
				t.Errorf("%s: got %s, want errors naming %q", name, r.Raw, tc.field)
			}
		}
		for name, body := range map[string]string{"Malformed": `{"url":`, "UnknownField": `{"url":"http://x.test","event_types":["send.blocked"],"x":1}`, "Null": `{"url":null,"event_types":["send.blocked"]}`} {
			if r := hookCall(t, c, in, http.MethodPost, hooks, body); r.Status != http.StatusBadRequest {
				t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Raw)
			}
		}
		servertest.WantStatus(t, hookCall(t, c, in, http.MethodPost, "/admin/api/apps/0190aaaa-0000-7000-8000-00000000ffff/webhooks",
			map[string]any{"url": rc.URL, "event_types": []string{"send.blocked"}}), http.StatusNotFound, "not_found")
		r := hookCall(t, c, in, http.MethodGet, hooks, nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if list, _ := r.Body["webhooks"].([]any); len(list) != 0 {
			t.Errorf("got %s, want no endpoints", r.Raw)
		}
	})

	ep := addHook(t, c, in, "default", rc.URL, events.Types()...)

	t.Run("AListedEndpointShowsNoSecret", func(t *testing.T) {
		r := hookCall(t, c, in, http.MethodGet, hooks, nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if strings.Contains(r.Raw, servertest.HookSecret) || !strings.Contains(r.Raw, ep) {
			t.Errorf("got %s, want the endpoint without its secret", r.Raw)
		}
	})

	t.Run("AVerificationsEventsArriveInOrderAndARefusedSendIsOnlyBlocked", func(t *testing.T) {
		phone := servertest.NewPhone()
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		id := r.Str("id")
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"id": id, "code": "000000"}), http.StatusUnprocessableEntity, "invalid_code")
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"id": id, "code": servertest.LastCode(t, p, phone)}), http.StatusOK, "")
		servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusTooManyRequests, "rate_limited")
		want := []string{events.VerificationCreated, events.VerificationSent, events.VerificationApproved}
		ok := rc.WaitFor(10*time.Second, func(evs []events.Event) bool {
			return len(servertest.TypesOf(evs, id)) == 3 && slices.ContainsFunc(evs, func(e events.Event) bool { return e.Type == events.SendBlocked })
		})
		got := rc.Events()
		if !ok || !slices.Equal(servertest.TypesOf(got, id), want) {
			t.Fatalf("got %v for the verification, want %v, and a send.blocked", servertest.TypesOf(got, id), want)
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
		env := servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{"OTP_CODE_TTL": "1s", "OTP_LIMIT_IP": "off"}))
		env["DATABASE_URL"], env["REDIS_URL"], env["OTP_REDIS_PREFIX"] = inEnv["DATABASE_URL"], inEnv["REDIS_URL"], inEnv["OTP_REDIS_PREFIX"]
		quick := servertest.Start(t, env)
		phone := servertest.NewPhone()
		r := servertest.Send(t, quick, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		id := r.Str("id")
		if !rc.WaitFor(10*time.Second, func(evs []events.Event) bool {
			return slices.Contains(servertest.TypesOf(evs, id), events.VerificationExpired)
		}) {
			t.Fatalf("got %v, want verification.expired", servertest.TypesOf(rc.Events(), id))
		}
		if got, want := servertest.TypesOf(rc.Events(), id), []string{events.VerificationCreated, events.VerificationSent, events.VerificationExpired}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		v := hookCall(t, c, in, http.MethodGet, "/admin/api/verifications/"+id, nil)
		if v.Status != http.StatusOK || !strings.Contains(v.Raw, `"expired"`) {
			t.Errorf("verification: got %s, want expired", v.Raw)
		}
	})

	t.Run("TestSendDeliveriesAndRedeliver", func(t *testing.T) {
		r := hookCall(t, c, in, http.MethodPost, hooks+"/"+ep+"/test", nil)
		servertest.WantStatus(t, r, http.StatusOK, "")
		if r.Body["delivered"] != true || r.Num("status") != 204 {
			t.Errorf("test send: got %s, want delivered with 204", r.Raw)
		}
		if !rc.WaitFor(5*time.Second, func(evs []events.Event) bool {
			return slices.ContainsFunc(evs, func(e events.Event) bool { return e.ID == r.Str("event_id") && e.Type == events.WebhookTest })
		}) {
			t.Error("the receiver did not get the test event")
		}
		list := hookCall(t, c, in, http.MethodGet, hooks+"/"+ep+"/deliveries?status=delivered&limit=500", nil)
		servertest.WantStatus(t, list, http.StatusOK, "")
		ds, _ := list.Body["deliveries"].([]any)
		if len(ds) < 4 {
			t.Fatalf("got %s, want the delivered events", list.Raw)
		}
		first, _ := ds[0].(map[string]any)
		eid, _ := first["event_id"].(string)
		dups := rc.Duplicates()
		re := hookCall(t, c, in, http.MethodPost, hooks+"/"+ep+"/deliveries/"+eid+"/redeliver", nil)
		servertest.WantStatus(t, re, http.StatusOK, "")
		if re.Str("status") != "pending" {
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
			servertest.WantStatus(t, hookCall(t, c, in, http.MethodGet, hooks+"/"+ep+"/deliveries"+q, nil), http.StatusBadRequest, "invalid_request")
		}
		for _, path := range []string{hooks + "/" + ep + "/deliveries/not-an-id/redeliver", hooks + "/0190aaaa-0000-7000-8000-000000000000/test"} {
			servertest.WantStatus(t, hookCall(t, c, in, http.MethodPost, path, nil), http.StatusNotFound, "not_found")
		}
	})

	t.Run("DeleteStopsDeliveries", func(t *testing.T) {
		other := eventstest.New(t, servertest.HookSecret)
		id := addHook(t, c, in, "default", other.URL, events.VerificationCreated)
		servertest.WantStatus(t, hookCall(t, c, in, http.MethodDelete, hooks+"/"+id, nil), http.StatusNoContent, "")
		servertest.WantStatus(t, hookCall(t, c, in, http.MethodDelete, hooks+"/"+id, nil), http.StatusNotFound, "not_found")
		phone := servertest.NewPhone()
		r := servertest.Send(t, in, phone)
		servertest.WantStatus(t, r, http.StatusCreated, "")
		if !rc.WaitFor(5*time.Second, func(evs []events.Event) bool { return len(servertest.TypesOf(evs, r.Str("id"))) >= 1 }) {
			t.Fatal("the remaining endpoint got nothing")
		}
		if n := other.Requests(); n != 0 {
			t.Errorf("the deleted endpoint got %d deliveries, want none", n)
		}
	})
}

func TestEventsInDevMode(t *testing.T) {
	rc := eventstest.New(t, servertest.HookSecret)
	env := servertest.EventsEnv(map[string]string{"ADMIN_TOKEN": servertest.TestAdminToken})
	in := servertest.Start(t, env)
	c := hookClient(t)
	addHook(t, c, in, "default", rc.URL, events.VerificationCreated, events.VerificationSent)
	r := servertest.Send(t, in, servertest.NewPhone())
	servertest.WantStatus(t, r, http.StatusCreated, "")
	if !rc.WaitFor(10*time.Second, func(evs []events.Event) bool { return len(servertest.TypesOf(evs, r.Str("id"))) == 2 }) {
		t.Fatalf("got %v, want created and sent", servertest.TypesOf(rc.Events(), r.Str("id")))
	}
	if got := servertest.TypesOf(rc.Events(), r.Str("id")); !slices.Equal(got, []string{events.VerificationCreated, events.VerificationSent}) {
		t.Errorf("got %v, want created then sent", got)
	}
}
