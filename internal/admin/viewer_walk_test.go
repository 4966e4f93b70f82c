package admin

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/rate"
)

// TestViewersSeeNoWholeNumberAnywhere: after the guard trips on a send to a number, with
// that number's history around the trip (a send, the refused send that tripped, a
// challenged one, one a shadow rule flagged), a limit reset of it and webhook deliveries
// of every event type, no route of the admin listener answers a viewer with the number
// whole. The routes come from the route table, and the API's query parameters that widen
// an answer from the admin document, so a route added later is walked too.
func TestViewersSeeNoWholeNumberAnywhere(t *testing.T) {
	e := newFullEnv(t)
	ctx := t.Context()
	const phone = "+819087651234"
	digits := phone[1:] // pages escape the "+"
	f := e.auditFixture(t)
	now := time.Now().UTC()

	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	ep, _, err := e.deps.Webhooks.AddWebhook(ctx, f.app, events.EndpointInput{URL: hook.URL, Secret: "whsec-of-the-walk-0123456789", Types: events.Types()}, "test")
	if err != nil {
		t.Fatalf("AddWebhook: %v", err)
	}

	start, err := e.features.BeginSend(ctx, otp.BeginSend{
		AppID: f.app, Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1", Provider: "webhook", Now: now,
		TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5, NewVerificationID: uuid.Must(uuid.NewV7()).String(),
		SendID: uuid.Must(uuid.NewV7()).String(), CodeHash: func(string) []byte { return []byte(testCodeHash) },
	})
	if err != nil {
		t.Fatalf("BeginSend: %v", err)
	}
	reloader := fraud.NewReloader(e.features, nil, fraud.Defaults(), discardLogger())
	if err := reloader.Load(ctx); err != nil {
		t.Fatal(err)
	}
	guard := fraud.NewGuard(reloader, &liftRecorder{}, e.features, discardLogger())
	tripped := tripWhy(rate.ScopePrefix, "+81908765", rate.FraudTripped)
	gs := rate.GuardState{Scope: rate.ScopePrefix, Key: "+81908765", Blocked: true, Tripped: true, RetryAfter: time.Hour}
	if err := guard.BlockStarted(ctx, otp.FraudTarget{Phone: phone, Region: "JP", ClientIP: "198.51.100.7"}, gs, tripped, now); err != nil {
		t.Fatalf("BlockStarted: %v", err)
	}
	challenged := tripWhy(rate.ScopePrefix, "+81908765", rate.FraudChallenged)
	for _, d := range []otp.DeniedSend{
		{Reason: "fraud_guard prefix +81901234", Fraud: &tripped},
		{Reason: "challenge prefix +81901234", Fraud: &challenged},
		{Reason: "phone 1/1m", Shadow: "fraud_guard ip_net 198.51.100.0/24"},
	} {
		d.ID, d.AppID, d.Phone, d.ClientIP, d.Status, d.Time = uuid.Must(uuid.NewV7()).String(), f.app, phone, "198.51.100.7", otp.SendBlocked, now
		e.features.(otp.DeniedRecorder).RecordDenied(d)
	}
	if err := e.features.RecordAdminAction(ctx, history.AdminAction{Action: history.ActionLimitReset, Target: "phone:" + phone, Time: now}); err != nil {
		t.Fatal(err)
	}
	sends, _, err := e.features.ListSends(ctx, history.SendFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var sendID string
	for _, s := range sends {
		if s.Phone == phone && s.VerificationID == start.Verification.ID {
			sendID = s.ID
		}
	}
	blocks, err := e.features.FraudBlocks(ctx, fraud.BlockFilter{All: true})
	if err != nil || len(blocks) == 0 {
		t.Fatalf("FraudBlocks: %v, %d; want the trip's", err, len(blocks))
	}

	// Each route's parameters name the fixture's rows, so that its answer shows them.
	fill := func(pattern string) string {
		id := uuid.NewString()
		switch {
		case strings.Contains(pattern, "/sends/{id}"):
			id = sendID
		case strings.Contains(pattern, "/verifications/{id}"):
			id = start.Verification.ID
		case strings.Contains(pattern, "/apps/{id}"):
			id = f.app
		case strings.Contains(pattern, "/fraud/blocks/{id}"):
			id = blocks[0].ID
		}
		return strings.NewReplacer("{id}", id, "{wid}", ep.ID, "{subject}", url.PathEscape(phone), "{name}", f.budget,
			"{key_id}", f.key, "{tid}", f.testNumber, "{eid}", f.event, "{token_id}", f.token, "*", "cmdline").Replace(pattern)
	}
	// Query parameters that widen an answer, with the value that does; the others either
	// narrow it or name an address the caller already knows.
	widen := map[string]string{"all": "true", "by": "prefix"}
	_, query := mustAdminDocument()

	var walked, answered int
	err = chi.Walk(NewServer(e.deps).(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		walked++
		targets := []string{fill(pattern)}
		q := url.Values{}
		for name := range query[method+" "+pattern] {
			if v, ok := widen[name]; ok {
				q.Set(name, v)
			}
		}
		if len(q) > 0 {
			targets = append(targets, targets[0]+"?"+q.Encode())
		}
		for _, target := range targets {
			w := e.call(t, method, target, bearer(e.tokens[operators.RoleViewer]), nil)
			if w.Code == http.StatusOK {
				answered++
			}
			body := w.Body.String() + strings.Join(w.Header().Values("Location"), " ")
			if strings.Contains(body, digits) {
				t.Errorf("%s %s as a viewer: got %d with %s whole: %s", method, target, w.Code, phone, excerpt(body, digits))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if walked < 60 || answered < 25 {
		t.Fatalf("walked %d routes, %d answered 200; want every route of the table, the viewer's readable", walked, answered)
	}
	// The fixture is what the walk looked at: a viewer sees the number masked in the
	// trip's reason and the Fraud page's sends, an operator sees it whole in the history.
	mask := pii.Mask(phone)[1:]
	for _, path := range []string{"/admin/fraud", "/admin/api/fraud/blocks", "/admin/api/audit", "/admin/limits"} {
		if w := e.call(t, http.MethodGet, path, bearer(e.tokens[operators.RoleViewer]), nil); strings.Count(w.Body.String(), mask) < 1 {
			t.Errorf("%s as a viewer: got %d, want %s masked as %s in it", path, w.Code, phone, mask)
		}
	}
	if w := e.call(t, http.MethodGet, "/admin/fraud", bearer(e.tokens[operators.RoleViewer]), nil); strings.Count(w.Body.String(), mask) < 3 {
		t.Errorf("the Fraud page as a viewer: want the trip's reason, the challenged and the flagged send masked: %s", w.Body)
	}
	if w := e.call(t, http.MethodGet, "/admin/api/sends/"+sendID, bearer(e.tokens[operators.RoleOperator]), nil); !strings.Contains(w.Body.String(), digits) {
		t.Errorf("the send as an operator: got %d %s, want %s whole", w.Code, w.Body, phone)
	}
}

// excerpt is the part of body around the first want, for a readable failure.
func excerpt(body, want string) string {
	i := strings.Index(body, want)
	return body[max(0, i-160):min(len(body), i+len(want)+80)]
}
