package smstest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"otpgate/internal/sms/smstest"
)

// TestPlivoRefusesWhatTheAPIReferenceRefuses holds the fake to its job: a request that
// breaks Plivo's Message API reference is refused as Plivo would, counted, and fails the
// test that made it.
func TestPlivoRefusesWhatTheAPIReferenceRefuses(t *testing.T) {
	account := smstest.PlivoAccount{AuthID: "MAXXXXXXXXXXXXXXXXXX", AuthToken: "token"}
	good := func() map[string]any {
		return map[string]any{"src": "+14155550100", "dst": "819012345678", "text": "Your code is 483920", "type": "sms"}
	}
	post := func(f *smstest.Plivo, path, user, pass, ct string, body map[string]any) int {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, f.URL+path, bytes.NewReader(raw))
		req.SetBasicAuth(user, pass)
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	path := "/v1/Account/" + account.AuthID + "/Message/"
	for name, c := range map[string]struct {
		path, pass, ct string
		edit           func(map[string]any)
		want           int
	}{
		"WrongToken":        {path, "x", "application/json", func(map[string]any) {}, http.StatusUnauthorized},
		"OtherAccountPath":  {"/v1/Account/MAOTHER/Message/", account.AuthToken, "application/json", func(map[string]any) {}, http.StatusUnauthorized},
		"NoTrailingSlash":   {"/v1/Account/" + account.AuthID + "/Message", account.AuthToken, "application/json", func(map[string]any) {}, http.StatusNotFound},
		"AForm":             {path, account.AuthToken, "application/x-www-form-urlencoded", func(map[string]any) {}, http.StatusBadRequest},
		"SrcAndPowerpack":   {path, account.AuthToken, "application/json", func(b map[string]any) { b["powerpack_uuid"] = "p" }, http.StatusBadRequest},
		"DstWithLetters":    {path, account.AuthToken, "application/json", func(b map[string]any) { b["dst"] = "81abc" }, http.StatusBadRequest},
		"UndocumentedField": {path, account.AuthToken, "application/json", func(b map[string]any) { b["body"] = "x" }, http.StatusBadRequest},
		"RelativeURL":       {path, account.AuthToken, "application/json", func(b map[string]any) { b["url"] = "/status" }, http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			tb := &recorder{}
			f := smstest.NewPlivo(tb, account)
			body := good()
			c.edit(body)
			if st := post(f, c.path, account.AuthID, c.pass, c.ct, body); st != c.want {
				t.Errorf("got %d, want %d", st, c.want)
			}
			tb.cleanup()
			if len(tb.errors) != 1 || len(f.Received()) != 0 {
				t.Errorf("got errors %q and %d kept, want the test failed and nothing kept", tb.errors, len(f.Received()))
			}
		})
	}
	t.Run("AWellFormedRequestIsTaken", func(t *testing.T) {
		f := smstest.NewPlivo(t, account)
		if st := post(f, path, account.AuthID, account.AuthToken, "application/json", good()); st != http.StatusAccepted {
			t.Errorf("got %d, want 202", st)
		}
		if got := f.Received(); len(got) != 1 || got[0].Code != "483920" || got[0].UUID == "" {
			t.Errorf("got %+v, want the message with its code and uuid", got)
		}
	})
}
