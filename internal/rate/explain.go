package rate

import (
	"math"
	"strconv"
	"strings"
)

// Actions of the fraud guard on a send, as its explanation records them.
const (
	// FraudTripped: this send started its target's block, and was refused.
	FraudTripped = "tripped"
	// FraudBlocked: the target's block, begun earlier, refused the send.
	FraudBlocked = "blocked"
	// FraudChallenged: the send was refused for want of a challenge.
	FraudChallenged = "challenged"
	// FraudPassed: a solved challenge admitted a send the guard would have refused.
	FraudPassed = "passed"
	// FraudShadow: a guard in shadow mode would have refused the send, which went ahead
	// (or was refused by something else).
	FraudShadow = "shadow"
)

// SignalBlock names, in an explanation, a block begun by an earlier trip: the send that
// meets it decided nothing, the figures are the target's as they now stand.
const SignalBlock = "block"

// FraudExplanation says why the fraud guard refused, challenged, admitted on a solved
// challenge or flagged one send: which signal of which target, and the figures it was
// decided on (the target's counts against its own baseline). History, the admin API, the
// console and the send.blocked event show it; a client is told the kind of target only.
type FraudExplanation struct {
	// Signal is one of the Signal* constants, or SignalBlock.
	Signal string
	// Scope and Key name the target, such as "prefix" and "+8190123".
	Scope, Key string
	// Action is one of the Fraud* actions.
	Action string
	// Level is the challenge level asked or solved; 0 when none.
	Level   int
	Figures FraudFigures
}

// FraudFigures are the numbers a guard decided on. Counts are decayed, so they may be
// fractional; conversions are approvals per send in [0, 1]. Sends include the one
// explained.
type FraudFigures struct {
	// RecentSends, RecentApprovals and RecentUnapproved are the short horizon's counts;
	// RecentConversion is approvals per send over it.
	RecentSends, RecentApprovals, RecentUnapproved, RecentConversion float64
	// BaselineConversion is the conversion of what came before the recent horizon, the
	// prior standing in for history the target does not have.
	BaselineConversion float64
	// LongSends, LongApprovals, LongUnapproved and LongConversion are the long horizon's;
	// LongBaseline is its conversion with the prior, what the long signals compare with.
	LongSends, LongApprovals, LongUnapproved, LongConversion, LongBaseline float64
	// Ratio is the factor of the baseline below which conversion counts against the
	// target; Threshold is what the deciding conversion was compared with (Ratio times the
	// baseline the signal reads, or for volume the volume ratio times it; 0 when volume
	// counts whatever the conversion).
	Ratio, Threshold float64
	// Floor is the target's floor of unapproved sends.
	Floor int
	// Countries is a network's distinct countries over the long horizon; CountriesAllowed
	// how many it may ask for without converting. Zero for other targets.
	Countries        float64
	CountriesAllowed int
	// VolumeSeen and VolumeExpected are the recent sends and those the baseline explains
	// (times the surge allowance); VolumeFloor the excess that needs a challenge.
	VolumeSeen, VolumeExpected float64
	VolumeFloor                int
}

// ExplainGuard builds the explanation of one guard's state: its limit in the policy
// brings the settings. counted says whether the decision recorded the send, so that the
// figures always include it.
func ExplainGuard(policy []Limit, g GuardState, action string, counted bool) *FraudExplanation {
	var guard *Guard
	for _, l := range policy {
		if l.Guard != nil && l.Scope == g.Scope && l.Key == g.Key {
			guard = l.Guard
			break
		}
	}
	if guard == nil {
		return nil
	}
	p, c := guard.Params, g.Counts
	this := 1.0
	if counted {
		this = 0
	}
	ss, sl := c.RecentSends+this-1, c.LongSends+this-1 // before this send
	ss, sl = max(ss, 0), max(sl, 0)
	prior := p.PriorRate * p.PriorWeight
	bs, ba := max(sl-ss, 0), max(c.LongApprovals-c.RecentApprovals, 0)
	f := FraudFigures{
		RecentSends: ss + 1, RecentApprovals: c.RecentApprovals, RecentUnapproved: max(ss+1-c.RecentApprovals, 0),
		RecentConversion:   c.RecentApprovals / (ss + 1),
		BaselineConversion: (ba + prior) / (bs + p.PriorWeight),
		LongSends:          sl + 1, LongApprovals: c.LongApprovals, LongUnapproved: max(sl+1-c.LongApprovals, 0),
		LongConversion: c.LongApprovals / (sl + 1), LongBaseline: (c.LongApprovals + prior) / (sl + p.PriorWeight),
		Ratio: p.Ratio, Floor: guard.Floor,
		VolumeSeen: ss + 1, VolumeExpected: c.VolumeExpected, VolumeFloor: guard.VolumeFloor,
	}
	if g.Scope == ScopeIPNet {
		f.Countries, f.CountriesAllowed = c.Countries, p.Countries
	}
	signal := g.Signal
	if signal == "" {
		signal = SignalBlock
	}
	switch {
	case signal == SignalLong || signal == SignalCountries:
		f.Threshold = p.Ratio * f.LongBaseline
	case signal == SignalVolume && guard.VolumeRatio >= 0:
		f.Threshold = guard.VolumeRatio * f.BaselineConversion
	case signal == SignalVolume:
	case signal == SignalYoungCountries && !(f.RecentUnapproved+0.01 >= float64(guard.Floor) &&
		f.RecentConversion < p.Ratio*f.BaselineConversion):
		// The pool trips on the long horizon when the recent one does not hold.
		f.Threshold = p.Ratio * f.LongBaseline
	default:
		f.Threshold = p.Ratio * f.BaselineConversion
	}
	f.round()
	return &FraudExplanation{Signal: signal, Scope: g.Scope, Key: g.Key, Action: action, Level: g.Challenge, Figures: f}
}

// round keeps what a person reads: counts to hundredths, conversions to thousandths.
func (f *FraudFigures) round() {
	for _, v := range []*float64{&f.RecentSends, &f.RecentApprovals, &f.RecentUnapproved, &f.LongSends,
		&f.LongApprovals, &f.LongUnapproved, &f.Countries, &f.VolumeSeen, &f.VolumeExpected} {
		*v = math.Round(*v*100) / 100
	}
	for _, v := range []*float64{&f.RecentConversion, &f.BaselineConversion, &f.LongConversion, &f.LongBaseline, &f.Threshold} {
		*v = math.Round(*v*1000) / 1000
	}
}

// Explain says why the fraud guard refused, challenged, passed or flagged the send the
// decision was made for, from the policy it was made on; nil when no guard did. A refusal
// comes first (a block, then a challenge), then an admission on a solved challenge, then
// what a shadow guard would have done.
func (d Decision) Explain(policy []Limit) *FraudExplanation {
	if g, ok := d.Block(); ok {
		action := FraudBlocked
		if g.Tripped {
			action = FraudTripped
		}
		return ExplainGuard(policy, g, action, d.Allowed)
	}
	if _, g, ok := d.Challenge(); ok {
		return ExplainGuard(policy, g, FraudChallenged, d.Allowed)
	}
	for _, g := range d.Guards {
		if g.Passed {
			return ExplainGuard(policy, g, FraudPassed, d.Allowed)
		}
	}
	return d.ExplainShadow(policy)
}

// ExplainShadow explains what the first shadow guard that would have refused the send
// would have done; nil when none would.
func (d Decision) ExplainShadow(policy []Limit) *FraudExplanation {
	for _, g := range d.Guards {
		if g.Shadow && (g.Blocked || g.Challenged) {
			return ExplainGuard(policy, g, FraudShadow, d.Allowed)
		}
	}
	return nil
}

// Summary is the explanation in one line, naming the figures that decided it, such as
// "12 unapproved sends in the recent horizon (floor 10), conversion 0 % against a
// baseline of 60 % × 0.3".
func (e FraudExplanation) Summary() string {
	f := e.Figures
	var b strings.Builder
	against := func(conv, base float64) {
		b.WriteString(", conversion " + pct(conv) + " against a baseline of " + pct(base) + " × " + num(f.Ratio))
	}
	switch e.Signal {
	case SignalLong:
		b.WriteString(num(f.LongUnapproved) + " unapproved sends over the long horizon (floor " + strconv.Itoa(f.Floor) + ")")
		against(f.LongConversion, f.LongBaseline)
	case SignalVolume:
		b.WriteString(num(f.VolumeSeen) + " recent sends where the baseline explains " + num(f.VolumeExpected) +
			" (volume floor " + strconv.Itoa(f.VolumeFloor) + ")")
		if f.Threshold > 0 {
			b.WriteString(", conversion " + pct(f.RecentConversion) + " under " + pct(f.Threshold))
		}
	case SignalCountries:
		b.WriteString(num(f.Countries) + " distinct countries from one network (allowed " + strconv.Itoa(f.CountriesAllowed) + ")")
		against(f.LongConversion, f.LongBaseline)
	case SignalYoungCountries:
		b.WriteString(num(f.RecentUnapproved) + " unapproved sends to young countries in the recent horizon (floor " +
			strconv.Itoa(f.Floor) + ")")
		against(f.RecentConversion, f.BaselineConversion)
	case SignalBlock:
		b.WriteString("blocked by an earlier trip; now " + num(f.RecentUnapproved) + " unapproved sends in the recent horizon (floor " +
			strconv.Itoa(f.Floor) + ")")
		against(f.RecentConversion, f.BaselineConversion)
	default:
		b.WriteString(num(f.RecentUnapproved) + " unapproved sends in the recent horizon (floor " + strconv.Itoa(f.Floor) + ")")
		against(f.RecentConversion, f.BaselineConversion)
	}
	return b.String()
}

// num writes a decayed count or a ratio as briefly as it reads: 12, 11.5, 0.25.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// pct writes a conversion in whole per cent.
func pct(v float64) string { return strconv.FormatFloat(math.Round(v*100), 'f', 0, 64) + " %" }
