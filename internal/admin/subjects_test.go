package admin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// TestAdminEraseSubject erases one number's history through the API, answers what it
// removed under the number's mask, leaves another number's history, and refuses what is
// neither an E.164 number nor an email address with 400 naming the subject.
func TestAdminEraseSubject(t *testing.T) {
	e := newAdminEnv(t, nil)
	const gone, kept = "+819012340001", "+819012340002"
	_, vid := e.seedSend(gone, "192.0.2.1", e.base, otp.SendSent)
	e.seedCheck(vid, "192.0.2.1", e.base, otp.OutcomeInvalidCode)
	e.seedSend(kept, "192.0.2.1", e.base, otp.SendSent)

	for _, bad := range []string{"819012340001", "+81-90", "ann", "%2B", "+81901234000x"} {
		w := e.call(t, http.MethodDelete, "/admin/api/subjects/"+bad, bearer(testAdminToken), nil)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"subject"`) {
			t.Errorf("subject %q: got %d %s, want 400 naming subject", bad, w.Code, w.Body)
		}
	}
	w := e.call(t, http.MethodDelete, "/admin/api/subjects/%2B819012340001", bearer(testAdminToken), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("erase: got %d %s", w.Code, w.Body)
	}
	var got erasedResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := (erasedCounts{Verifications: 1, Sends: 1, Attempts: 1}); got.Removed != want || got.Subject != "+819*******01" {
		t.Errorf("got %+v, want %+v of +819*******01", got, want)
	}
	for phone, n := range map[string]int{gone: 0, kept: 1} {
		rows, _, err := e.store.ListSends(t.Context(), history.SendFilter{Phone: phone})
		if err != nil || len(rows) != n {
			t.Errorf("history of %s: %d rows, %v, want %d", phone, len(rows), err, n)
		}
	}
	log, err := e.store.AuditLog(t.Context(), history.AuditFilter{Action: history.ActionSubjectErased})
	if err != nil || len(log) != 1 || strings.Contains(log[0].Target, "9012340001") {
		t.Errorf("audit: %+v, %v, want one entry that does not name the number", log, err)
	}
}
