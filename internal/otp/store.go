package otp

import (
	"context"
	"time"

	"otpgate/internal/psd2"
	"otpgate/internal/rate"
)

// Store keeps verifications, their sends and their check attempts.
// Implementations: internal/postgres (production) and internal/inmem (dev mode);
// internal/storetest holds the behaviour both must share.
type Store interface {
	// BeginSend counts one send for the phone in one atomic step: it reuses the pending,
	// unexpired verification of the app and phone (extending its expiry to Now+TTL) or closes an
	// expired one and creates a new one with ID NewVerificationID; it appends
	// CodeHash(verification id) to its codes and writes a send row with status sending.
	// What it counts on is what it holds, whatever BeginSend.Seen says.
	// Errors: *ErrSendBudget when the pending verification already had MaxSends sends.
	BeginSend(ctx context.Context, p BeginSend) (SendStart, error)
	// FinishSend records how a begun send ended. With Undo, what BeginSend counted is
	// given back: a verification it created is canceled, a resend no longer counts.
	// Without Undo an implementation may queue the outcome and write it in batches,
	// shortly after and at shutdown; an outcome lost with a crash leaves the send sending
	// until a sweeper settles it as SendUnknown. Errors: ErrNotFound for a send the store
	// finds it does not have (a queued outcome of an unknown send is dropped instead).
	FinishSend(ctx context.Context, p FinishSend) error
	// Verification returns one verification by id. Errors: ErrNotFound.
	Verification(ctx context.Context, id string) (Verification, error)
	// Newest returns the app's newest verification of address (the E.164 phone or the
	// email address), whatever its status: the one a check by address is for.
	// Errors: ErrNotFound when the app has none.
	Newest(ctx context.Context, appID, address string) (Verification, error)
	// Check calls decide with the verification named by CheckRef (by id, or the phone's
	// newest), saves the Status, Attempts and ClosedAt that decide returns and records the
	// attempt with decide's outcome, atomically: what it saves was decided on the state
	// it replaces, so concurrent checks see each other's counts. decide may be called
	// more than once (on a state that changed meanwhile) and must have no other effect.
	// Errors: ErrNotFound when no verification matches (decide is then not called).
	Check(ctx context.Context, p CheckRef, decide func(Verification) (Verification, CheckOutcome)) (Verification, CheckOutcome, error)
}

// BeginSend holds what Store.BeginSend needs.
type BeginSend struct {
	// AppID is the app the send is for; each app has its own pending verification per phone.
	AppID string
	// Phone is the address: the E.164 number, or the email address of the email channel.
	Phone   string
	Channel string
	// Country is the number's ISO 3166 region; empty for email.
	Country string
	// Encoding and Segments describe the SMS (empty and 0 for other channels).
	Encoding string
	Segments int
	Locale   string
	ClientIP string
	// Provider is the sender's name until the outcome names the provider that took it.
	Provider string
	Now      time.Time
	TTL      time.Duration
	MaxSends int
	// MaxAttempts is stored with a verification when it is created.
	MaxAttempts int
	// NewVerificationID is used when a new verification has to be created.
	NewVerificationID string
	// SendID names the new send row.
	SendID string
	// CodeHash returns the hash of this send's code for the given verification id.
	CodeHash func(verificationID string) []byte
	// Shadow names what shadow fraud rules would have refused, from rate.Decision.ShadowReport.
	Shadow string
	// Fraud, when set, says why the guard admitted the send on a solved challenge or what a
	// shadow guard would have done, from rate.Decision.Explain.
	Fraud *rate.FraudExplanation
	// Test marks a send to one of the app's test numbers: nothing went out.
	Test bool
	// Transaction, when not zero, is the payment this send's code is bound to (PSD2): the
	// verification keeps it as its Transaction.
	Transaction psd2.Transaction
	// Seen, when set, is the pending verification of the app and address as the caller saw
	// it earlier: a store may hash the code for its id up front and count the send in one
	// step while it is still the pending one, and must otherwise decide on what it holds
	// (it may have been checked, closed, expired or replaced since).
	Seen *Verification
	// Cost is the send's estimated cost in micro-units of Currency (0: nothing, such as a
	// test number's send or when no price applies).
	Cost     int64
	Currency string
}

// SendStart is the outcome of Store.BeginSend.
type SendStart struct {
	// Verification is the state after this send was counted.
	Verification Verification
	// Created is true when this send created the verification.
	Created bool
}

// FinishSend holds what Store.FinishSend needs.
type FinishSend struct {
	SendID         string
	VerificationID string
	Status         SendStatus // SendSent or SendFailed
	// Provider is the provider instance that took the message, or the last one tried.
	Provider string
	// Attempts are every provider attempt, in order.
	Attempts   []ProviderAttempt
	ProviderID string
	Error      string
	Undo       bool
	Created    bool
	Now        time.Time
	// SendAt is when the send row was dated (BeginSend's Now), zero when not known: a
	// store may find the row by it.
	SendAt time.Time
}

// CheckRef names the verification a check is for: ID, or else Phone (its newest
// verification), in both cases only among the verifications of AppID.
type CheckRef struct {
	AppID    string
	ID       string
	Phone    string
	ClientIP string
	Now      time.Time
	// Seen, when set, is the verification the check is for as the caller saw it earlier
	// (for a check by Phone, a pending one of that phone); a store may decide on it and
	// save in one step while it is unchanged, and must otherwise decide on what it holds.
	Seen *Verification
}

// DeniedSend is a refused send, recorded in history asynchronously.
type DeniedSend struct {
	ID    string
	AppID string
	// Phone is the address, as in BeginSend.
	Phone string
	// Channel is the channel asked for; empty means sms.
	Channel  string
	ClientIP string
	Status   SendStatus // SendBlocked or SendDuplicate
	// Reason is the refusing rule, such as "phone 1/1m" or "duplicate 1/5s".
	Reason string
	// Shadow names what shadow fraud rules would have refused, from rate.Decision.ShadowReport.
	Shadow string
	// Fraud, when set, says why the guard refused the send (or what a shadow guard would
	// have done), from rate.Decision.Explain.
	Fraud *rate.FraudExplanation
	Time  time.Time
}

// DeniedRecorder takes refused sends for history without ever blocking the request;
// what it cannot keep up with it drops and counts.
type DeniedRecorder interface {
	RecordDenied(d DeniedSend)
}

// Limiter decides, records and refunds requests against policies of several limits.
type Limiter interface {
	// Allow decides the request against every limit at once and records it in all of
	// them, or in none when any rule refuses it. Errors wrap ErrUnavailable.
	Allow(ctx context.Context, limits []rate.Limit) (rate.Decision, error)
	// Refund removes a reservation from every key that holds it; refunding an unknown
	// or already refunded reservation changes nothing. Errors wrap ErrUnavailable.
	Refund(ctx context.Context, r rate.Reservation) error
	// Inspect reports the state of one limit without recording anything.
	Inspect(ctx context.Context, l rate.Limit) ([]rate.RuleState, error)
	// Reset forgets every request recorded for one scope and key.
	Reset(ctx context.Context, scope, key string) error
}
