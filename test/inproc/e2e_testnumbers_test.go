package inproc

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"

	"otpgate/internal/server/servertest"
)

// TestTestNumbersEndToEnd adds test numbers through the admin API and uses them through
// the public API and the Twilio adapter: nothing is sent, the fraud guard is not asked,
// only the fixed code approves, history marks them test, and a removed one is ordinary.
func TestTestNumbersEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{
		"OTP_TRUSTED_PROXIES": "127.0.0.1/32", "OTP_FRAUD_GUARD": "enforce", "OTP_FRAUD_FLOOR_PREFIX": "2",
		"OTP_FRAUD_VOLUME_FLOOR": "0", "OTP_FRAUD_FLOOR_YOUNG_COUNTRIES": "0",
	}))
	expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	number := servertest.PrefixPhone(servertest.NewPrefix(), 1)
	path := "/admin/api/apps/default/test-numbers"

	t.Run("BadInputNamesTheFieldAndStoresNothing", func(t *testing.T) {
		for field, body := range map[string]map[string]any{
			"address":    {"address": "nope", "code": "424242", "expires_at": expires},
			"code":       {"address": number, "code": "4242", "expires_at": expires},
			"expires_at": {"address": number, "code": "424242", "expires_at": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		} {
			r := servertest.AdminCall(t, in, http.MethodPost, path, body)
			errs, _ := r.Body["errors"].(map[string]any)
			if r.Status != http.StatusBadRequest || errs[field] == nil {
				t.Errorf("%s: got %d %s, want 400 naming it", field, r.Status, r.Raw)
			}
		}
		if r := servertest.AdminCall(t, in, http.MethodGet, path, nil); !strings.Contains(r.Raw, `"test_numbers":[]`) {
			t.Errorf("list: got %s, want none", r.Raw)
		}
	})

	var id string
	t.Run("AddedItsCodeIsMasked", func(t *testing.T) {
		r := servertest.AdminCall(t, in, http.MethodPost, path, map[string]any{"address": number, "code": "424242", "expires_at": expires})
		servertest.WantStatus(t, r, http.StatusCreated, "")
		id = r.Str("id")
		if r.Str("code") != "••••42" || r.Str("address") != number || strings.Contains(r.Raw, "424242") {
			t.Errorf("got %s, want the code masked", r.Raw)
		}
		if list := servertest.AdminCall(t, in, http.MethodGet, path, nil); !strings.Contains(list.Raw, id) || strings.Contains(list.Raw, "424242") {
			t.Errorf("list: got %s", list.Raw)
		}
		if strings.Contains(in.Stderr.String()+in.Stdout.String(), "424242") {
			t.Error("the code is in the log")
		}
	})

	t.Run("SendsGoNowhereMeetNoGuardAndOnlyTheFixedCodeApproves", func(t *testing.T) {
		for i := range 3 { // past the prefix's floor of 2 unapproved sends
			r := servertest.Send(t, in, number, servertest.From(fmt.Sprintf("10.50.%d.1", i))...)
			if want := min(i, 1)*(http.StatusOK-http.StatusCreated) + http.StatusCreated; r.Status != want {
				t.Fatalf("send %d: got %d %s, want %d (a new verification, then resends)", i, r.Status, r.Raw, want)
			}
		}
		if got := p.Received(number); len(got) != 0 {
			t.Fatalf("got %d messages to a test number, want none", len(got))
		}
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": number, "code": "000000"}, servertest.From("10.50.0.1")...), http.StatusUnprocessableEntity, "invalid_code")
		servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": number, "code": "424242"}, servertest.From("10.50.0.1")...), http.StatusOK, "")
		sends := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(number), nil)
		if strings.Count(sends.Raw, `"test":true`) != 3 || !strings.Contains(sends.Raw, `"provider":"test_number"`) {
			t.Errorf("history: got %s, want three sends marked test", sends.Raw)
		}
		if blocks := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/fraud/blocks", nil); strings.Contains(blocks.Raw, "prefix") {
			t.Errorf("blocks: got %s, want the guard not asked", blocks.Raw)
		}
	})

	t.Run("RemovedItIsAnOrdinaryNumberAgain", func(t *testing.T) {
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodDelete, path+"/"+id, nil), http.StatusOK, "")
		servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodDelete, path+"/"+id, nil), http.StatusNotFound, "not_found")
		servertest.WantStatus(t, servertest.Send(t, in, number, servertest.From("10.51.0.1")...), http.StatusCreated, "")
		if got := p.Received(number); len(got) != 1 {
			t.Errorf("got %d messages, want the code sent", len(got))
		}
	})

	t.Run("TheTwilioAdapterHonoursThem", func(t *testing.T) {
		app := servertest.CreateApp(t, in, map[string]any{"name": "Twilio tests", "access": "key"})
		keyID, secret := servertest.CreateKey(t, in, app, false)
		to := servertest.PrefixPhone(servertest.NewPrefix(), 2)
		r := servertest.AdminCall(t, in, http.MethodPost, "/admin/api/apps/"+app+"/test-numbers", map[string]any{"address": to, "code": "777777", "expires_at": expires})
		servertest.WantStatus(t, r, http.StatusCreated, "")
		svc := "/v2/Services/VA" + strings.ReplaceAll(app, "-", "")
		st, body := twilioCall(t, in, keyID, secret, http.MethodPost, svc+"/Verifications", url.Values{"To": {to}, "Channel": {"sms"}}, "")
		if st != http.StatusCreated || body["status"] != "pending" {
			t.Fatalf("verification: got %d %v", st, body)
		}
		if got := p.Received(to); len(got) != 0 {
			t.Errorf("got %d messages, want none", len(got))
		}
		st, body = twilioCall(t, in, keyID, secret, http.MethodPost, svc+"/VerificationCheck", url.Values{"To": {to}, "Code": {"777777"}}, "")
		if st != http.StatusOK || body["status"] != "approved" {
			t.Errorf("check: got %d %v, want approved", st, body)
		}
	})
}

// TestAppNumberTypesEndToEnd gives an app its own denied number types: it sends to a
// premium-rate number that the default app, with the server's, refuses.
func TestAppNumberTypesEndToEnd(t *testing.T) {
	p := servertest.NewProvider(t)
	in := servertest.Start(t, servertest.ProdEnv(t, p, map[string]string{"OTP_TRUSTED_PROXIES": "127.0.0.1/32"}))
	premium := phonenumbers.Format(phonenumbers.GetExampleNumberForType("GB", phonenumbers.PREMIUM_RATE), phonenumbers.E164)
	app := servertest.CreateApp(t, in, map[string]any{"name": "Premium", "denied_number_types": []string{"Shared_Cost"}})
	got := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/"+app, nil)
	if !strings.Contains(got.Raw, `"denied_number_types":["shared_cost"]`) {
		t.Errorf("app: got %s, want its own list", got.Raw)
	}
	if d := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/apps/default", nil); !strings.Contains(d.Raw, `"denied_number_types":null`) {
		t.Errorf("default app: got %s, want the server's (null)", d.Raw)
	}

	servertest.WantStatus(t, servertest.Send(t, in, premium, servertest.From("10.60.0.1")...), http.StatusUnprocessableEntity, "number_type_not_allowed")
	r := servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": premium}, servertest.From("10.60.1.1")...)
	servertest.WantStatus(t, r, http.StatusCreated, "")
	if got := p.Received(premium); len(got) != 1 {
		t.Errorf("got %d messages, want the app's one", len(got))
	}

	bad := servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, map[string]any{"denied_number_types": []string{"premium"}})
	if errs, _ := bad.Body["errors"].(map[string]any); bad.Status != http.StatusBadRequest || errs["denied_number_types"] == nil {
		t.Errorf("a bad type: got %d %s, want 400 naming denied_number_types", bad.Status, bad.Raw)
	}
	servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodPatch, "/admin/api/apps/"+app, `{"denied_number_types":"default"}`), http.StatusOK, "")
	// The instance that made the change applies it at once.
	r = servertest.Post(t, in.API+"/v1/apps/"+app+"/verifications", map[string]string{"phone": premium}, servertest.From("10.60.2.1")...)
	servertest.WantStatus(t, r, http.StatusUnprocessableEntity, "number_type_not_allowed")
}
