package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
)

// TestViewersSeeAddressesMasked: a viewer's history API, history page, verification page
// and audit log show a number masked; an operator's and an admin's show it whole.
func TestViewersSeeAddressesMasked(t *testing.T) {
	e := newFullEnv(t)
	const phone = "+819012345678"
	now := time.Now().UTC()
	st, err := e.features.BeginSend(t.Context(), otp.BeginSend{Phone: phone, Channel: "sms", Locale: "en", ClientIP: "192.0.2.1",
		Now: now, TTL: time.Hour, MaxSends: 3, MaxAttempts: 3, NewVerificationID: uuid.NewString(), SendID: uuid.NewString(),
		CodeHash: func(string) []byte { return []byte("h") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.features.RecordAdminAction(t.Context(), history.AdminAction{Action: history.ActionLimitReset, Target: "phone:" + phone, Time: now}); err != nil {
		t.Fatal(err)
	}
	wantMaskedForViewers(t, e, phone, "/admin/api/sends", "/admin/", "/admin/verifications/"+st.Verification.ID,
		"/admin/api/verifications/"+st.Verification.ID, "/admin/api/audit")
}

// wantMaskedForViewers GETs each path as a viewer, an operator and an admin, and wants
// phone masked for the viewer and whole for the others.
func wantMaskedForViewers(t *testing.T, e *fullEnv, phone string, paths ...string) {
	t.Helper()
	// Pages escape the "+": compare what follows it.
	digits, mask := phone[1:], pii.Mask(phone)[1:]
	for _, path := range paths {
		for role, whole := range map[operators.Role]bool{operators.RoleViewer: false, operators.RoleOperator: true, operators.RoleAdmin: true} {
			w := e.call(t, http.MethodGet, path, bearer(e.tokens[role]), nil)
			body := w.Body.String()
			switch {
			case w.Code != http.StatusOK:
				t.Errorf("%s as %s: got %d %s", path, role, w.Code, body)
			case whole && !strings.Contains(body, digits):
				t.Errorf("%s as %s: got %s, want %s whole", path, role, body, phone)
			case !whole && (strings.Contains(body, digits) || !strings.Contains(body, mask)):
				t.Errorf("%s as %s: got %s, want %s masked as %s", path, role, body, phone, mask)
			}
		}
	}
}

// TestViewersSeeDeliveriesMasked: the address in a webhook delivery's event ("to") is masked
// for a viewer in the API, and whole for an operator and an admin. (The endpoint's page
// shows no payload.)
func TestViewersSeeDeliveriesMasked(t *testing.T) {
	e := newFullEnv(t)
	f := e.auditFixture(t)
	wantMaskedForViewers(t, e, "+819055556666", // the fixture's send
		"/admin/api/apps/"+f.app+"/webhooks/"+f.webhook+"/deliveries")
}
