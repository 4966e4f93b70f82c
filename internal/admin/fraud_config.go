package admin

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"

	"otpgate/internal/fraud"
	"otpgate/internal/httpkit"
)

// Read-only members of the fraud configuration's JSON, ignored when a client sends the
// answer of a GET back with its changes.
const (
	fraudVersionField = "version"
	fraudAppliedField = "applied_version"
)

// fraudConfigJSON is the fraud configuration as the API shows it: every setting by name
// (numbers as JSON numbers), the stored version, and the version this instance applies.
func fraudConfigJSON(c fraud.Config, version, applied int64) map[string]any {
	out := map[string]any{fraudVersionField: version, fraudAppliedField: applied}
	for name, text := range c.Values() {
		if fraud.Numeric(name) {
			out[name] = json.Number(text)
		} else {
			out[name] = text
		}
	}
	return out
}

// handleFraudConfig answers GET with the configuration and PUT with the configuration after
// setting the body's settings (any subset of them) on it.
func handleFraudConfig(log *slog.Logger, f fraud.AdminService) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			values, err := readFraudSettings(r)
			if err != nil {
				writeAdminProblem(w, r, log, err)
				return
			}
			if _, _, err := f.UpdateSettings(r.Context(), values, actorFrom(r.Context())); err != nil {
				writeFraudProblem(w, r, log, err, "")
				return
			}
		}
		c, version, err := f.Settings(r.Context())
		if err != nil {
			writeAdminProblem(w, r, log, err)
			return
		}
		_ = httpkit.Encode(w, http.StatusOK, fraudConfigJSON(c, version, f.Running().Version))
	})
}

// readFraudSettings reads a PUT body: one JSON object of settings, each a string or a
// number, read as its text; duplicates are refused as everywhere.
func readFraudSettings(r *http.Request) (map[string]string, error) {
	body, err := httpkit.ReadJSON(r)
	if err != nil {
		return nil, err
	}
	if err := httpkit.CheckObject(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, invalidRequest("malformed JSON: "+err.Error(), nil)
	}
	values, bad := map[string]string{}, map[string]string{}
	for name, v := range raw {
		switch v := v.(type) {
		case string:
			values[name] = v
		case json.Number:
			values[name] = v.String()
		default:
			bad[name] = "must be a string or a number"
		}
	}
	delete(values, fraudVersionField)
	delete(values, fraudAppliedField)
	if len(bad) > 0 {
		return nil, invalidRequest("the request has invalid fields", bad)
	}
	return values, nil
}

// fraudSettingHelp says in a line what each setting does, for the rule editor.
var fraudSettingHelp = map[string]string{
	"fraud_guard":                   "off, shadow (reports what it would block) or enforce",
	"fraud_block":                   "how long a trip blocks its target",
	"limit_country":                 "static rules per country, such as *:500/1h,NG:10/1h; a rule ending :shadow only reports",
	"limit_prefix":                  "static rules for every number prefix, such as 10/1h",
	"limit_ip_net":                  "static rules for every client network (IPv4 /24, IPv6 /48)",
	"prefix_drop":                   "how many last digits a prefix leaves out",
	"fraud_short_horizon":           "time constant of the recent counts",
	"fraud_long_horizon":            "time constant of the baseline counts",
	"fraud_ratio":                   "trip when recent conversion falls below this times the baseline",
	"fraud_prior_rate":              "conversion assumed before a target has history",
	"fraud_prior_weight":            "how many sends that assumption weighs",
	"fraud_floor_country":           "unapproved recent sends a country may have before it can trip",
	"fraud_floor_prefix":            "unapproved recent sends a prefix may have before it can trip",
	"fraud_floor_ip_net":            "unapproved recent sends a network may have before it can trip",
	"fraud_surge":                   "how many times its baseline volume a target may carry before its volume counts",
	"fraud_volume_floor":            "recent sends past that allowance that ask for a challenge (0: off)",
	"fraud_floor_young_countries":   "unapproved sends to countries without approved history, together, past which those sends need a challenge (0: off)",
	"fraud_young_approvals":         "approvals over the long horizon that make a country established rather than young",
	"fraud_countries_per_network":   "distinct countries a network may ask for without converting before it needs a challenge (0: off)",
	"fraud_block_pass":              "solved sends a block admits over its life, less those approved; the work rises with each (0: none)",
	"fraud_min_approval_delay":      "an approval sooner than this after its send is implausibly fast",
	"fraud_fast_approval_weight":    "what an approval sooner than that weighs",
	"fraud_foreign_approval_weight": "what an approval from another network than the send's weighs",
}

// fraudSetting is one line of the rule editor.
type fraudSetting struct {
	Name, Value, Env, Help string
}

// handleFraudConfigForm saves the rule editor: every setting it sent, validated together.
func handleFraudConfigForm(log *slog.Logger, view *adminView, f fraud.AdminService, p adminParams) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			adminError(w, r, log, view, invalidParams(map[string]string{"form": "could not be read"}))
			return
		}
		values := map[string]string{}
		for _, name := range fraud.FieldNames() {
			if v, ok := r.PostForm[name]; ok && len(v) == 1 {
				values[name] = v[0]
			}
		}
		_, _, err := f.UpdateSettings(r.Context(), values, actorFrom(r.Context()))
		if fields, ok := invalidFields(err); ok {
			data, lerr := loadFraudPage(r.Context(), f, p, values)
			if lerr != nil {
				adminError(w, r, log, view, lerr)
				return
			}
			data.Problems = sortedProblems(fields)
			renderFraud(w, r, view, http.StatusBadRequest, data)
			return
		}
		if err != nil {
			adminError(w, r, log, view, err)
			return
		}
		http.Redirect(w, r, "/admin/fraud?done=config", http.StatusSeeOther)
	})
}
