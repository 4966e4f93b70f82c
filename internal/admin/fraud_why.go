package admin

import (
	"otpgate/internal/events"
	"otpgate/internal/rate"
)

// adminFraud is why the fraud guard refused, challenged, passed or flagged a send, or
// started a block, as the admin API shows it: the figures as send.blocked carries them,
// and the decision in one line.
type adminFraud struct {
	Signal  string              `json:"signal"`
	Scope   string              `json:"scope"`
	Target  string              `json:"target"`
	Action  string              `json:"action"`
	Level   int                 `json:"level"`
	Summary string              `json:"summary"`
	Figures events.FraudFigures `json:"figures"`
}

// toAdminFraud is e as the API shows it; nil for nil.
func toAdminFraud(e *rate.FraudExplanation) *adminFraud {
	d := events.NewFraudData(e)
	if d == nil {
		return nil
	}
	return &adminFraud{Signal: d.Signal, Scope: d.Scope, Target: d.Target, Action: d.Action, Level: d.Level,
		Summary: e.Summary(), Figures: d.Figures}
}
