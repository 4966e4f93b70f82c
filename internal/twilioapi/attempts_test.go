package twilioapi_test

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/otp"
)

// seedSends writes n sends of verifications of app to distinct numbers, a minute apart
// from start, approving every other one; it returns the send ids, oldest first.
func (a *accountAPI) seedSends(t *testing.T, app string, n int, start time.Time) []string {
	t.Helper()
	var ids []string
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		p := otp.BeginSend{
			AppID: app, Phone: "+8190" + strings.Repeat("1", 7) + string(rune('0'+i%10)), Channel: otp.ChannelSMS, Country: "JP",
			Locale: "ja", ClientIP: "192.0.2.1", Provider: "test", Now: at, TTL: 5 * time.Minute, MaxSends: 5, MaxAttempts: 5,
			NewVerificationID: uuid.Must(uuid.NewV7()).String(), SendID: uuid.Must(uuid.NewV7()).String(),
			CodeHash: func(id string) []byte { h := sha256.Sum256([]byte(id)); return h[:] },
		}
		st, err := a.store.BeginSend(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.store.FinishSend(t.Context(), otp.FinishSend{SendID: p.SendID, Status: otp.SendSent, Now: at}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_, _, err := a.store.Check(t.Context(), otp.CheckRef{AppID: app, ID: st.Verification.ID, Now: at},
				func(v otp.Verification) (otp.Verification, otp.CheckOutcome) {
					v.Status, v.ClosedAt = otp.StatusApproved, at
					return v, otp.OutcomeApproved
				})
			if err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, p.SendID)
	}
	return ids
}

func TestVerificationAttempts(t *testing.T) {
	t.Run("ListedNewestFirstThroughEveryPage", func(t *testing.T) {
		a := newAccountAPI(t)
		ids := a.seedSends(t, otp.DefaultAppID, 5, time.Now().Add(-time.Hour))
		var got []string
		next := "/Attempts?PageSize=2"
		for page := 0; next != ""; page++ {
			if page > 3 {
				t.Fatal("the pages never end")
			}
			ans := a.account(t, http.MethodGet, next, nil)
			list, _ := ans.body["attempts"].([]any)
			for _, x := range list {
				att := x.(map[string]any)
				got = append(got, att["sid"].(string))
				if att["channel"] != "sms" || att["service_sid"] != apps.ServiceSID(otp.DefaultAppID) || !strings.HasPrefix(att["verification_sid"].(string), "VE") {
					t.Errorf("attempt %v", att)
				}
			}
			m, ok := ans.body["meta"].(map[string]any)
			if !ok {
				t.Fatalf("%s: got %d %v", next, ans.status, ans.body)
			}
			if m["key"] != "attempts" || m["page"] != float64(page) {
				t.Errorf("meta %v", m)
			}
			next, _ = m["next_page_url"].(string)
			next = strings.TrimPrefix(next, "http://example.com/v2")
		}
		var want []string
		for i := len(ids) - 1; i >= 0; i-- {
			want = append(want, "VL"+strings.ReplaceAll(ids[i], "-", ""))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("FiltersAndTheSummary", func(t *testing.T) {
		a := newAccountAPI(t)
		a.seedSends(t, otp.DefaultAppID, 4, time.Now().Add(-time.Hour))
		count := func(q string) int {
			ans := a.account(t, http.MethodGet, "/Attempts?"+q, nil)
			list, ok := ans.body["attempts"].([]any)
			if !ok {
				t.Fatalf("%s: got %d %v", q, ans.status, ans.body)
			}
			return len(list)
		}
		for q, want := range map[string]int{
			"":                               4,
			"Status=converted":               2,
			"Status=UNCONVERTED":             2,
			"Country=jp":                     4,
			"Country=US":                     0,
			"Channel=sms":                    4,
			"Channel=call":                   0,
			"Channel=rbm":                    0,
			"ChannelData.To=%2B819011111110": 1,
			"DateCreatedAfter=" + url.QueryEscape(time.Now().Add(-time.Hour+90*time.Second).UTC().Format(time.RFC3339)): 2,
			"VerifyServiceSid=" + apps.ServiceSID(otp.DefaultAppID):                                                     4,
		} {
			if got := count(q); got != want {
				t.Errorf("%q: got %d attempts, want %d", q, got, want)
			}
		}
		sum := a.account(t, http.MethodGet, "/Attempts/Summary?Country=JP&DestinationPrefix=%2B8190", nil)
		if sum.status != http.StatusOK || sum.body["total_attempts"] != 4.0 || sum.body["total_converted"] != 2.0 ||
			sum.body["total_unconverted"] != 2.0 || sum.body["conversion_rate_percentage"] != "50.00" {
			t.Errorf("summary: got %d %v", sum.status, sum.body)
		}
	})

	t.Run("BadFiltersAre60200", func(t *testing.T) {
		a := newAccountAPI(t)
		for _, q := range []string{
			"Status=maybe", "Channel=fax", "Country=Japan", "DateCreatedAfter=yesterday", "VerifyServiceSid=VA1",
			"VerificationSid=VE1", "PageToken=PT1", "Page=2", "PageSize=0", "Colour=blue",
		} {
			wantError(t, q, a.account(t, http.MethodGet, "/Attempts?"+q, nil), 60200, 400)
		}
		for _, q := range []string{"DestinationPrefix=81", "DestinationPrefix=%2B12345678", "ChannelData.To=%2B1", "Status=converted"} {
			wantError(t, "summary "+q, a.account(t, http.MethodGet, "/Attempts/Summary?"+q, nil), 60200, 400)
		}
	})

	t.Run("AKeySeesItsOwnServicesAttemptsOnly", func(t *testing.T) {
		a := newAccountAPI(t)
		other := a.account(t, http.MethodPost, "/Services", url.Values{"FriendlyName": {"Other"}}).body["sid"].(string)
		otherID, _ := apps.IDFromSID(other, "VA")
		mine := a.seedSends(t, otp.DefaultAppID, 2, time.Now().Add(-time.Hour))
		theirs := a.seedSends(t, otherID, 3, time.Now().Add(-time.Hour))
		ans := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts", nil)
		if list, _ := ans.body["attempts"].([]any); len(list) != 2 {
			t.Errorf("key's list: got %v, want its two attempts", ans.body)
		}
		if all := a.account(t, http.MethodGet, "/Attempts", nil); len(all.body["attempts"].([]any)) != 5 {
			t.Errorf("account's list: got %v, want all five", all.body)
		}
		wantError(t, "another service's list", a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts?VerifyServiceSid="+other, nil), 20404, 404)
		wantError(t, "another service's summary", a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts/Summary?VerifyServiceSid="+other, nil), 20404, 404)
		theirSid := "VL" + strings.ReplaceAll(theirs[0], "-", "")
		wantError(t, "another service's attempt", a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts/"+theirSid, nil), 20404, 404)
		if got := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts/VL"+strings.ReplaceAll(mine[0], "-", ""), nil); got.status != http.StatusOK ||
			got.body["conversion_status"] != "converted" {
			t.Errorf("own attempt: got %d %v", got.status, got.body)
		}
		if sum := a.do(t, a.keyID, a.keySecr, http.MethodGet, "/Attempts/Summary", nil); sum.body["total_attempts"] != 2.0 {
			t.Errorf("key's summary: got %v, want its two attempts", sum.body)
		}
		wantError(t, "no such attempt", a.account(t, http.MethodGet, "/Attempts/VL"+strings.Repeat("0", 32), nil), 20404, 404)
		wantError(t, "not an attempt sid", a.account(t, http.MethodGet, "/Attempts/VE"+strings.Repeat("0", 32), nil), 20404, 404)
	})
}
