package events

import "otpgate/internal/rate"

// FraudData is why the fraud guard refused, challenged, admitted on a solved challenge or
// flagged a send (rate.FraudExplanation), as send.blocked carries it. The stores keep a
// send's explanation in this shape, so the payload built in SQL is the stored value.
type FraudData struct {
	// Signal is recent_unapproved, long_unapproved, volume, countries, young_countries, or
	// block for a block begun by an earlier trip.
	Signal string `json:"signal"`
	// Scope and Target name the target, such as "prefix" and "+8190123".
	Scope  string `json:"scope"`
	Target string `json:"target"`
	// Action is tripped, blocked, challenged, passed or shadow.
	Action string `json:"action"`
	// Level is the challenge level asked or solved; 0 when none.
	Level   int          `json:"level"`
	Figures FraudFigures `json:"figures"`
}

// FraudFigures are the numbers the guard decided on (rate.FraudFigures).
type FraudFigures struct {
	RecentSends        float64 `json:"recent_sends"`
	RecentApprovals    float64 `json:"recent_approvals"`
	RecentUnapproved   float64 `json:"recent_unapproved"`
	RecentConversion   float64 `json:"recent_conversion"`
	BaselineConversion float64 `json:"baseline_conversion"`
	LongSends          float64 `json:"long_sends"`
	LongApprovals      float64 `json:"long_approvals"`
	LongUnapproved     float64 `json:"long_unapproved"`
	LongConversion     float64 `json:"long_conversion"`
	LongBaseline       float64 `json:"long_baseline"`
	Ratio              float64 `json:"ratio"`
	Threshold          float64 `json:"threshold"`
	Floor              int     `json:"floor"`
	Countries          float64 `json:"countries"`
	CountriesAllowed   int     `json:"countries_allowed"`
	VolumeSeen         float64 `json:"volume_seen"`
	VolumeExpected     float64 `json:"volume_expected"`
	VolumeFloor        int     `json:"volume_floor"`
}

// NewFraudData is e in the events' shape; nil for nil.
func NewFraudData(e *rate.FraudExplanation) *FraudData {
	if e == nil {
		return nil
	}
	f := e.Figures
	return &FraudData{
		Signal: e.Signal, Scope: e.Scope, Target: e.Key, Action: e.Action, Level: e.Level,
		Figures: FraudFigures{
			RecentSends: f.RecentSends, RecentApprovals: f.RecentApprovals, RecentUnapproved: f.RecentUnapproved,
			RecentConversion: f.RecentConversion, BaselineConversion: f.BaselineConversion,
			LongSends: f.LongSends, LongApprovals: f.LongApprovals, LongUnapproved: f.LongUnapproved,
			LongConversion: f.LongConversion, LongBaseline: f.LongBaseline, Ratio: f.Ratio, Threshold: f.Threshold,
			Floor: f.Floor, Countries: f.Countries, CountriesAllowed: f.CountriesAllowed,
			VolumeSeen: f.VolumeSeen, VolumeExpected: f.VolumeExpected, VolumeFloor: f.VolumeFloor,
		},
	}
}

// Explanation is d in the domain's shape; nil for nil.
func (d *FraudData) Explanation() *rate.FraudExplanation {
	if d == nil {
		return nil
	}
	f := d.Figures
	return &rate.FraudExplanation{
		Signal: d.Signal, Scope: d.Scope, Key: d.Target, Action: d.Action, Level: d.Level,
		Figures: rate.FraudFigures{
			RecentSends: f.RecentSends, RecentApprovals: f.RecentApprovals, RecentUnapproved: f.RecentUnapproved,
			RecentConversion: f.RecentConversion, BaselineConversion: f.BaselineConversion,
			LongSends: f.LongSends, LongApprovals: f.LongApprovals, LongUnapproved: f.LongUnapproved,
			LongConversion: f.LongConversion, LongBaseline: f.LongBaseline, Ratio: f.Ratio, Threshold: f.Threshold,
			Floor: f.Floor, Countries: f.Countries, CountriesAllowed: f.CountriesAllowed,
			VolumeSeen: f.VolumeSeen, VolumeExpected: f.VolumeExpected, VolumeFloor: f.VolumeFloor,
		},
	}
}
