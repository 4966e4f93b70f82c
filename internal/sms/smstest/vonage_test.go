package smstest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"otpgate/internal/sms/smstest"
)

// TestVonageRefusesWhatTheAPIReferenceRefuses holds the fake to its job: a request that
// breaks Vonage's SMS API reference is refused, counted, and fails the test that made it.
func TestVonageRefusesWhatTheAPIReferenceRefuses(t *testing.T) {
	good := url.Values{"api_key": {"abcd1234"}, "api_secret": {"abcdef0123456789"}, "from": {"Example"},
		"to": {"819012345678"}, "text": {"Your code is 483920"}, "type": {"text"}}
	for name, c := range map[string]struct {
		edit   func(url.Values)
		status string
	}{
		"WrongSecret":         {func(v url.Values) { v.Set("api_secret", "x") }, "4"},
		"ToWithPlus":          {func(v url.Values) { v.Set("to", "+819012345678") }, "3"},
		"NoText":              {func(v url.Values) { v.Del("text") }, "2"},
		"JapaneseAsText":      {func(v url.Values) { v.Set("text", "認証コード 483920") }, "3"},
		"UndocumentedParam":   {func(v url.Values) { v.Set("body_text", "x") }, "3"},
		"ClientRefTooLong":    {func(v url.Values) { v.Set("client-ref", strings.Repeat("x", 41)) }, "3"},
		"CallbackNotAbsolute": {func(v url.Values) { v.Set("callback", "/v1/receipts/vonage/x") }, "3"},
	} {
		t.Run(name, func(t *testing.T) {
			tb := &recorder{}
			f := smstest.NewVonage(tb, smstest.VonageAccount{APIKey: "abcd1234", APISecret: "abcdef0123456789"})
			form := url.Values{}
			for k, v := range good {
				form[k] = append([]string(nil), v...)
			}
			c.edit(form)
			resp, err := http.PostForm(f.URL+"/sms/json", form)
			if err != nil {
				t.Fatal(err)
			}
			var reply struct {
				Messages []struct{ Status string } `json:"messages"`
			}
			err = json.NewDecoder(resp.Body).Decode(&reply)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || len(reply.Messages) != 1 || reply.Messages[0].Status != c.status {
				t.Errorf("got %d %+v (%v), want 200 with status %s", resp.StatusCode, reply, err, c.status)
			}
			tb.cleanup()
			if len(tb.errors) != 1 || len(f.Received()) != 0 {
				t.Errorf("got errors %q and %d kept, want the test failed and nothing kept", tb.errors, len(f.Received()))
			}
		})
	}
	t.Run("AWellFormedRequestIsTaken", func(t *testing.T) {
		f := smstest.NewVonage(t, smstest.VonageAccount{APIKey: "abcd1234", APISecret: "abcdef0123456789"})
		resp, err := http.PostForm(f.URL+"/sms/json", good)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := f.Received(); len(got) != 1 || got[0].Code != "483920" || len(got[0].IDs) != 1 {
			t.Errorf("got %+v, want the message with its code and one part", got)
		}
	})
}
