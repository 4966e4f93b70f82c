// Package events owns the events otpgate reports to apps: their types and payloads, the
// webhook endpoints apps subscribe with, the dispatcher that delivers the outbox the stores
// write, and the job that finds verifications and fraud blocks that ran out. The stores
// (internal/postgres, internal/inmem) write each event in the same transaction as the change
// it reports; this package only reads the outbox, so nothing here can report a change that
// was not committed.
package events

import (
	"encoding/json"
	"slices"
	"time"
)

// Event types. Verification events are delivered in order per verification; fraud block
// events in order per block; send.blocked in no particular order.
const (
	VerificationCreated  = "verification.created"
	VerificationSent     = "verification.sent"
	VerificationApproved = "verification.approved"
	VerificationExpired  = "verification.expired"
	VerificationFailed   = "verification.failed"
	SendBlocked          = "send.blocked"
	FraudBlockStarted    = "fraud.block_started"
	FraudBlockEnded      = "fraud.block_ended"
	// BudgetThreshold reports a spend budget's window reaching 50, 80 or 100 % of its cap,
	// once per threshold and window.
	BudgetThreshold = "budget.threshold"
	// WebhookTest is the type of the event the admin's test-send posts; it is never queued.
	WebhookTest = "webhook.test"
)

// Types lists the event types an endpoint can subscribe to, in documentation order.
func Types() []string {
	return []string{VerificationCreated, VerificationSent, VerificationApproved, VerificationExpired,
		VerificationFailed, SendBlocked, FraudBlockStarted, FraudBlockEnded, BudgetThreshold}
}

// KnownType reports whether t is one of Types.
func KnownType(t string) bool { return slices.Contains(Types(), t) }

// Event is one event as a receiver gets it: the JSON body of the POST.
type Event struct {
	// ID is the same for every delivery of one event, to every endpoint; receivers
	// deduplicate by it.
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	// Data is the type's payload (VerificationData, BlockedData, FraudBlockData).
	Data json.RawMessage `json:"data"`
}

// VerificationData is the payload of the verification.* events: the verification as the
// change left it.
type VerificationData struct {
	VerificationID string `json:"verification_id"`
	AppID          string `json:"app_id"`
	Channel        string `json:"channel"`
	// To is the phone number in E.164, or the email address.
	To        string `json:"to"`
	Status    string `json:"status"`
	Sends     int    `json:"sends"`
	Attempts  int    `json:"attempts"`
	ExpiresAt string `json:"expires_at"`
	// SendID names the send of verification.created and verification.sent.
	SendID string `json:"send_id,omitempty"`
	// Provider is the provider instance that took the message (verification.sent).
	Provider string `json:"provider,omitempty"`
	// Reason is why a verification failed: "too_many_attempts", or "not_delivered" when no
	// provider could take its only message.
	Reason string `json:"reason,omitempty"`
}

// BlockedData is the payload of send.blocked: a send the limits, the fraud guard or the
// block list refused.
type BlockedData struct {
	SendID  string `json:"send_id"`
	AppID   string `json:"app_id"`
	Channel string `json:"channel"`
	To      string `json:"to"`
	// Reason is the refusing rule, such as "phone 1/1m" or "fraud_guard prefix +8190123".
	Reason string `json:"reason"`
	// Fraud says why the fraud guard refused the send, or what a shadow guard would have
	// done; absent when it had no part in it.
	Fraud *FraudData `json:"fraud,omitempty"`
}

// FraudBlockData is the payload of fraud.block_started and fraud.block_ended. Blocks are
// not an app's: every endpoint subscribed to the type gets them.
type FraudBlockData struct {
	BlockID   string `json:"block_id"`
	Scope     string `json:"scope"`
	Target    string `json:"target"`
	Mode      string `json:"mode"`
	Reason    string `json:"reason"`
	StartedAt string `json:"started_at"`
	EndsAt    string `json:"ends_at"`
	// EndedAt and LiftedBy are set by fraud.block_ended; LiftedBy is "" for a block that
	// ran out.
	EndedAt  string `json:"ended_at,omitempty"`
	LiftedBy string `json:"lifted_by,omitempty"`
}

// BudgetThresholdData is the payload of budget.threshold. An app's budgets (App set) go to
// that app's endpoints; global and country budgets to every endpoint subscribed to the type.
type BudgetThresholdData struct {
	Budget string `json:"budget"`
	// Kind is global, app, country or app_country.
	Kind    string `json:"kind"`
	AppID   string `json:"app_id,omitempty"`
	Country string `json:"country,omitempty"`
	// Period is day or month; Mode enforce, shadow or alert.
	Period string `json:"period"`
	Mode   string `json:"mode"`
	// Threshold is 50, 80 or 100 (percent of the cap).
	Threshold int `json:"threshold"`
	// Spent and Cap are decimal amounts of Currency.
	Spent    string `json:"spent"`
	Cap      string `json:"cap"`
	Currency string `json:"currency"`
	// WindowStart and ResetsAt bound the window.
	WindowStart string `json:"window_start"`
	ResetsAt    string `json:"resets_at"`
	// Fence, on the threshold 100 of a fenced budget, names the country that reached its
	// share of the window (once per country and window); nil for the cap's thresholds.
	Fence *BudgetFenceData `json:"fence,omitempty"`
}

// BudgetFenceData is a country that reached its share of a fenced budget: Share and Spent
// are decimal amounts; Young reports that the share was the young countries' together.
type BudgetFenceData struct {
	Country string `json:"country"`
	Young   bool   `json:"young"`
	Share   string `json:"share"`
	Spent   string `json:"spent"`
}

// Time writes t as the payloads do: RFC 3339 in UTC with microseconds, as Postgres keeps it.
func Time(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
}
