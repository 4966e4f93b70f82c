package postgres

import (
	"encoding/json"
	"fmt"

	"otpgate/internal/templates"
)

// storedTemplates is one locale's templates as apps.templates keeps them (migrations/00008).
type storedTemplates struct {
	SMS          string `json:"sms,omitempty"`
	Voice        string `json:"voice,omitempty"`
	EmailSubject string `json:"email_subject,omitempty"`
	EmailText    string `json:"email_text,omitempty"`
	EmailHTML    string `json:"email_html,omitempty"`
}

// templatesJSON encodes an app's templates per locale; none is an empty object.
func templatesJSON(m map[string]templates.Message) []byte {
	out := make(map[string]storedTemplates, len(m))
	for l, t := range m {
		out[l] = storedTemplates(t)
	}
	b, _ := json.Marshal(out) // strings always encode
	return b
}

// parseTemplates decodes apps.templates.
func parseTemplates(b []byte) (map[string]templates.Message, error) {
	var in map[string]storedTemplates
	if len(b) > 0 {
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]templates.Message, len(in))
	for l, t := range in {
		out[l] = templates.Message(t)
	}
	return out, nil
}
