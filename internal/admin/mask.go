package admin

import (
	"context"
	"encoding/json"
	"strings"

	"otpgate/internal/events"
	"otpgate/internal/fraud"
	"otpgate/internal/history"
	"otpgate/internal/operators"
	"otpgate/internal/pii"
)

// maskingAdmin shows a viewer phone numbers and email addresses masked (pii.Mask) in the
// history, the verification pages and the audit log (maskingFraud and maskingEvents on the
// Fraud page and in webhook deliveries), and operators and admins in full: a
// viewer watches traffic and needs to tell sends apart, not to reach the people. A
// request without a principal (none gets this far) would see them masked too.
type maskingAdmin struct {
	history.AdminService
}

// masked reports whether the caller of ctx sees addresses masked.
func masked(ctx context.Context) bool {
	p, ok := operators.PrincipalFrom(ctx)
	return !ok || !p.Allows(operators.RoleOperator)
}

// ListSends implements history.AdminService.
func (m maskingAdmin) ListSends(ctx context.Context, f history.SendFilter) ([]history.SendRow, *history.SendCursor, error) {
	rows, next, err := m.AdminService.ListSends(ctx, f)
	return maskRows(ctx, rows), next, err
}

// Send implements history.AdminService.
func (m maskingAdmin) Send(ctx context.Context, id string) (history.SendRow, error) {
	r, err := m.AdminService.Send(ctx, id)
	if masked(ctx) {
		r.Phone = pii.Mask(r.Phone)
	}
	return r, err
}

// VerificationDetail implements history.AdminService.
func (m maskingAdmin) VerificationDetail(ctx context.Context, id string) (history.VerificationDetail, error) {
	d, err := m.AdminService.VerificationDetail(ctx, id)
	if masked(ctx) {
		d.Verification.Address = pii.Mask(d.Verification.Address)
		for i := range d.Sends {
			d.Sends[i].Phone = pii.Mask(d.Sends[i].Phone)
		}
	}
	return d, err
}

// AdminActions implements history.AdminService.
func (m maskingAdmin) AdminActions(ctx context.Context, limit int) ([]history.AdminAction, error) {
	as, err := m.AdminService.AdminActions(ctx, limit)
	return maskTargets(ctx, as), err
}

// AuditLog implements history.AdminService.
func (m maskingAdmin) AuditLog(ctx context.Context, f history.AuditFilter) ([]history.AdminAction, error) {
	as, err := m.AdminService.AuditLog(ctx, f)
	return maskTargets(ctx, as), err
}

// maskTargets masks the address a limit reset's target names ("phone:+81…").
func maskTargets(ctx context.Context, as []history.AdminAction) []history.AdminAction {
	if !masked(ctx) {
		return as
	}
	for i, a := range as {
		if k, v, ok := strings.Cut(a.Target, ":"); ok && (k == history.TargetPhone || k == "email") {
			as[i].Target = k + ":" + pii.Mask(v)
		}
	}
	return as
}

// maskingFraud shows a viewer the numbers of the sends on the Fraud page (those a shadow
// rule flagged, those challenged) masked, as the history shows them.
type maskingFraud struct {
	fraud.AdminService
}

// ShadowSends implements fraud.AdminService.
func (m maskingFraud) ShadowSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	rows, err := m.AdminService.ShadowSends(ctx, limit)
	return maskRows(ctx, rows), err
}

// ChallengedSends implements fraud.AdminService.
func (m maskingFraud) ChallengedSends(ctx context.Context, limit int) ([]history.SendRow, error) {
	rows, err := m.AdminService.ChallengedSends(ctx, limit)
	return maskRows(ctx, rows), err
}

// maskRows masks the address of each row for a viewer.
func maskRows(ctx context.Context, rows []history.SendRow) []history.SendRow {
	if masked(ctx) {
		for i := range rows {
			rows[i].Phone = pii.Mask(rows[i].Phone)
		}
	}
	return rows
}

// maskingEvents shows a viewer the address in a webhook delivery's event ("to") masked, as
// the history shows it: the deliveries of an endpoint would otherwise list every number
// its app verified.
type maskingEvents struct {
	events.AdminService
}

// Deliveries implements events.AdminService.
func (m maskingEvents) Deliveries(ctx context.Context, appID, id string, f events.DeliveryFilter) ([]events.Delivery, error) {
	list, err := m.AdminService.Deliveries(ctx, appID, id, f)
	if masked(ctx) {
		for i := range list {
			list[i].Event.Data = maskEventAddress(list[i].Event.Data)
		}
	}
	return list, err
}

// maskEventAddress masks the "to" of an event's payload; a payload without one, or that is
// not an object, is left as it is.
func maskEventAddress(data json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return data
	}
	var to string
	if raw, ok := fields["to"]; !ok || json.Unmarshal(raw, &to) != nil || to == "" {
		return data
	}
	fields["to"], _ = json.Marshal(pii.Mask(to))
	out, err := json.Marshal(fields)
	if err != nil {
		return data
	}
	return out
}
