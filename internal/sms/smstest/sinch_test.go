package smstest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"otpgate/internal/sms/smstest"
)

// TestSinchRefusesWhatTheAPIReferenceRefuses holds the fake to its job: a batch that
// breaks Sinch's SMS API reference is refused as Sinch would, with its error code,
// counted, and fails the test that made it.
func TestSinchRefusesWhatTheAPIReferenceRefuses(t *testing.T) {
	plan := smstest.SinchPlan{ServicePlanID: "plan1", APIToken: "token"}
	good := func() map[string]any {
		return map[string]any{"from": "+12015550100", "to": []string{"+819012345678"}, "body": "Your code is 483920", "type": "mt_text"}
	}
	post := func(f *smstest.Sinch, path, auth string, body map[string]any) (int, string) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, f.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Code
	}
	path, auth := "/xms/v1/plan1/batches", "Bearer token"
	for name, c := range map[string]struct {
		path, auth string
		edit       func(map[string]any)
		status     int
		code       string
	}{
		"WrongToken":        {path, "Bearer x", func(map[string]any) {}, http.StatusUnauthorized, "unauthorized"},
		"BasicAuth":         {path, "Basic dG9rZW4=", func(map[string]any) {}, http.StatusUnauthorized, "unauthorized"},
		"OtherPlan":         {"/xms/v1/plan2/batches", auth, func(map[string]any) {}, http.StatusUnauthorized, "unauthorized"},
		"ToWithoutPlus":     {path, auth, func(b map[string]any) { b["to"] = []string{"819012345678"} }, http.StatusBadRequest, "syntax_invalid_parameter_format"},
		"NoBody":            {path, auth, func(b map[string]any) { delete(b, "body") }, http.StatusBadRequest, "syntax_constraint_violation"},
		"ReportWithoutURL":  {path, auth, func(b map[string]any) { b["delivery_report"] = "per_recipient" }, http.StatusForbidden, "missing_callback_url"},
		"UnknownReportKind": {path, auth, func(b map[string]any) { b["delivery_report"] = "all"; b["callback_url"] = "https://x.example/r" }, http.StatusBadRequest, "syntax_constraint_violation"},
		"UndocumentedField": {path, auth, func(b map[string]any) { b["text"] = "x" }, http.StatusBadRequest, "syntax_invalid_json"},
	} {
		t.Run(name, func(t *testing.T) {
			tb := &recorder{}
			f := smstest.NewSinch(tb, plan)
			body := good()
			c.edit(body)
			if st, code := post(f, c.path, c.auth, body); st != c.status || code != c.code {
				t.Errorf("got %d %s, want %d %s", st, code, c.status, c.code)
			}
			tb.cleanup()
			if len(tb.errors) != 1 || len(f.Received()) != 0 {
				t.Errorf("got errors %q and %d kept, want the test failed and nothing kept", tb.errors, len(f.Received()))
			}
		})
	}
	t.Run("AWellFormedBatchIsTaken", func(t *testing.T) {
		f := smstest.NewSinch(t, plan)
		if st, _ := post(f, path, auth, good()); st != http.StatusCreated {
			t.Errorf("got %d, want 201", st)
		}
		if got := f.Received(); len(got) != 1 || got[0].Code != "483920" || got[0].ID == "" {
			t.Errorf("got %+v, want the batch with its code and id", got)
		}
	})
}
