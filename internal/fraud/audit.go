package fraud

import (
	"time"

	"otpgate/internal/history"
	"otpgate/internal/pii"
)

// shown is an entry's value as the audit log names it: a whole number masked (pii.Mask),
// a prefix, country or network as it is.
func (e ListEntry) shown() string {
	if e.Kind == KindNumber {
		return pii.Mask(e.Value)
	}
	return e.Value
}

// AuditTarget names the entry in the audit log, such as "deny:prefix +8190123".
func (e ListEntry) AuditTarget() string {
	return string(e.List) + ":" + string(e.Kind) + " " + e.shown()
}

// listEntryChange is an entry as its audit entry's Before or After shows it.
type listEntryChange struct {
	ID   int64  `json:"id"`
	List string `json:"list"`
	Kind string `json:"kind"`
	// Value is masked for a whole number.
	Value string `json:"value"`
	Note  string `json:"note,omitempty"`
}

func (e ListEntry) change() listEntryChange {
	return listEntryChange{ID: e.ID, List: string(e.List), Kind: string(e.Kind), Value: e.shown(), Note: e.Note}
}

// AuditListAdd completes a's entry of e's addition: its target, and e as After. The stores
// call it once the entry has its id.
func AuditListAdd(a history.AdminAction, e ListEntry) history.AdminAction {
	a.Target, a.Before, a.After = e.AuditTarget(), "", history.Change(e.change())
	return a
}

// AuditListRemove completes a's entry of e's removal: its target, and e as Before. The
// stores call it with the row they deleted.
func AuditListRemove(a history.AdminAction, e ListEntry) history.AdminAction {
	a.Target, a.Before, a.After = e.AuditTarget(), history.Change(e.change()), ""
	return a
}

// blockChange is a block as its lift's audit entry shows it.
type blockChange struct {
	ID       string     `json:"id"`
	Scope    string     `json:"scope"`
	Target   string     `json:"target"`
	EndsAt   time.Time  `json:"ends_at"`
	LiftedAt *time.Time `json:"lifted_at"`
	LiftedBy string     `json:"lifted_by,omitempty"`
}

// AuditLift completes a's entry of the lift at at of b, as the store returned it lifted:
// its target, Before (not lifted, unless an earlier lift was kept) and After.
func AuditLift(a history.AdminAction, b Block, at time.Time) history.AdminAction {
	after := blockChange{ID: b.ID, Scope: b.Scope, Target: b.Target, EndsAt: b.EndsAt.UTC(), LiftedBy: b.LiftedBy}
	before := after
	if !b.LiftedAt.IsZero() {
		lifted := b.LiftedAt.UTC()
		after.LiftedAt = &lifted
		// A block lifted before this call keeps its first lift: nothing changed.
		if b.LiftedAt.Before(at.Truncate(time.Microsecond)) {
			before.LiftedAt = &lifted
		} else {
			before.LiftedBy = ""
		}
	}
	a.Target, a.Before, a.After = b.Scope+":"+b.Target, history.Change(before), history.Change(after)
	return a
}
