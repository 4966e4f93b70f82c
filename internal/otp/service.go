// Package otp is the verification kernel of otpgate. A Verification is one code sent to
// one address and the checks made against it, with its Status and its sends' SendStatus;
// Service runs the two use cases, Send (SendInput to SendResult) and Check (CheckInput to
// CheckResult), and reads and closes verifications by id. It keeps them in a Store and
// reaches everything else through ports it declares and others implement: the Limiter
// (internal/ratelimit), the Sender and Renderer (internal/delivery, internal/sms,
// internal/email, internal/message), and the optional Fraud, Spend and Challenger steps
// (internal/fraud, internal/spend, internal/challenge). Its errors are typed and
// classified once (Code, ErrorCode, Severity), so that every adapter renders them alike.
// Around it, features own their vocabulary and stores (apps, history, receipt, totp,
// tokens, events, spend, fraud), and adapters translate (internal/http, internal/twilioapi,
// internal/admin, internal/postgres, internal/inmem). The kernel imports only leaf packages,
// which import nothing of otpgate: contact (addresses, regions, locales), rate (the
// limiter's vocabulary), templates (what apps shape in messages), proof (the challenges)
// and psd2 (the payment a code confirms). It imports no driver, router or net/http.
package otp

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/proof"
	"otpgate/internal/psd2"
	"otpgate/internal/rate"
	"otpgate/internal/recent"
)

// Config holds the service's typed settings; internal/server fills it from the environment.
type Config struct {
	// Secret keys the code HMACs.
	Secret      []byte
	CodeLength  int
	CodeTTL     time.Duration
	MaxSends    int
	MaxAttempts int
	// DefaultRegion parses numbers written without a leading +, such as "JP".
	DefaultRegion string
	// AllowedCountries are ISO 3166 alpha-2 codes; empty allows every country.
	AllowedCountries []string
	PhoneRules       []rate.Rule
	IPRules          []rate.Rule
	// DuplicateWindow allows one send per phone and client fingerprint per window; 0 turns it off.
	DuplicateWindow time.Duration
	// GlobalRules budget all sends together; empty turns it off.
	GlobalRules     []rate.Rule
	CheckPhoneRules []rate.Rule
	CheckIPRules    []rate.Rule
	// EmailRules and CheckEmailRules limit sends and checks per email address, as
	// PhoneRules and CheckPhoneRules do per phone.
	EmailRules      []rate.Rule
	CheckEmailRules []rate.Rule
	// WebOTPDomain and AndroidAppHash are the default app's SMS options (see App).
	WebOTPDomain   string
	AndroidAppHash string
	// SMSTimeout bounds the delivery of one message, every provider tried included.
	SMSTimeout time.Duration
	// LimiterTimeout bounds one limiter call; past it the request fails closed.
	LimiterTimeout time.Duration
	// StoreTimeout bounds one store call.
	StoreTimeout time.Duration
	// DeniedNumberTypes are the number types (contact.PhoneType) codes are not sent to by SMS or
	// voice; an app may set its own.
	DeniedNumberTypes []string
	// DefaultAccess is the default app's access mode (OTP_DEFAULT_APP_ACCESS); empty is public.
	DefaultAccess Access
	// AllowedOrigins, TokenTTL and TokenAddress are the default app's browser settings
	// (see App); zero values take the defaults.
	AllowedOrigins []string
	TokenTTL       time.Duration
	TokenAddress   TokenAddress
	// AddressIndex names a phone number or email address in the limiter's keys: a keyed
	// hash that stands in for it (pii.Keys.Index), so that Redis holds no address. nil
	// keeps the address itself, as tests of the policies read it.
	AddressIndex func(address string) string
}

// Index is what stands in for address in the limiter's keys (Config.AddressIndex).
func (c Config) Index(address string) string {
	if c.AddressIndex == nil || address == "" {
		return address
	}
	return c.AddressIndex(address)
}

// Service sends and checks verification codes.
type Service struct {
	cfg Config
	// defaultApp is the app of calls that name none, from cfg.
	defaultApp App
	store      Store
	limiter    Limiter
	sender     Sender
	renderer   Renderer
	// channels are the channels sender carries.
	channels []string
	history  DeniedRecorder
	log      *slog.Logger
	phones   *phoneCache
	// seen holds the verifications this instance last wrote or read, by id (see seen.go).
	seen *recent.Map[string, Verification]
	// pending holds the id of each address's pending verification among those in seen.
	pending *recent.Map[addressKey, string]
	fraud   Fraud // nil: no fraud step (see UseFraud)
	// challenger issues and checks the guard's challenges; nil: none (see UseChallenger).
	challenger Challenger
	spend      Spend // nil: sends cost nothing (see UseSpend)

	// Now is the service's clock (history times, expiry); tests replace it.
	Now func() time.Time
	// NewID makes ids for verifications and sends; tests replace it.
	NewID func() string
	// Rand is the source of code digits; tests replace it.
	Rand io.Reader
}

// NewService wires a service from its parts: sender carries the messages (a Deliverer
// reports each provider attempt; one with Channels says which channels it carries, else
// it carries SMS alone) and renderer writes them.
func NewService(cfg Config, store Store, limiter Limiter, sender Sender, renderer Renderer, denied DeniedRecorder, log *slog.Logger) *Service {
	return &Service{
		cfg: cfg, defaultApp: cfg.DefaultApp(), store: store, limiter: limiter, sender: sender, renderer: renderer,
		channels: carriedChannels(sender), history: denied, log: log, phones: newPhoneCache(),
		seen: recent.New[string, Verification](seenSize), pending: recent.New[addressKey, string](seenSize),
		Now:   func() time.Time { return time.Now().UTC() },
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() },
		Rand:  rand.Reader,
	}
}

// SendInput is one request to send (or resend) a code.
type SendInput struct {
	// App is the app the send is for; nil is the default app.
	App *App
	// Phone is the number for the phone channels; Email the address for the email channel.
	Phone   string
	Email   string
	Channel string // sms, whatsapp, voice or email; empty means email when Email is set, else sms
	Locale  string // a built-in locale in any spelling CanonLocale reads; empty means the number's country's (CountryLocale)
	// ClientIP is the client's address as the limiter keys it (IPv6 already cut to its prefix).
	ClientIP string
	// Fingerprint tells one client from another for the duplicate window, with ClientIP.
	Fingerprint string
	// FriendlyName, when set, names the app in the message instead of its name: at most
	// 30 characters, one line, no link.
	FriendlyName string
	// Solution answers a challenge the fraud guard asked of an earlier send.
	Solution proof.Solution
	// Transaction is the payment the code confirms; required by an app with PSD2, refused
	// by any other.
	Transaction psd2.Transaction
	// RateLimits are the app's rate limits the caller keys this send by: each one's rules
	// are met on its value, in the send's one limiter call.
	RateLimits []rate.KeyedLimit
}

// SendResult is what a send produced. Decision is set whenever the limiter was
// asked, also when Send returns an error, so callers can always emit rate-limit headers.
type SendResult struct {
	Verification Verification
	// Created is true for a new verification, false for a resend.
	Created bool
	// Channel is the channel this send went out on: a resend may take another one than
	// the verification's first send, which Verification.Channel is.
	Channel string
	// NextResendAt is the earliest time every rule of the send policy (duplicate, phone,
	// IP and global) admits another send.
	NextResendAt time.Time
	// SendsLeft is how many more sends this verification may have.
	SendsLeft int
	Decision  rate.Decision
	// Cost is the send's estimated cost in micro-units of Currency; Country the number's
	// ISO region (empty for email).
	Cost              int64
	Currency, Country string
}

// CheckInput is one attempt to prove a code: by verification ID, by Phone or by Email.
type CheckInput struct {
	// App is the app the check is for; nil is the default app.
	App   *App
	ID    string
	Phone string
	// Email names the verification by its address, as Phone by its number.
	Email    string
	Code     string
	ClientIP string
	// Transaction is the payment the code was sent for: a code approves only with the
	// amount and payee it was sent with. Required by an app with PSD2, refused by any other.
	Transaction psd2.Transaction
}

// CheckResult is an approved verification. Decision is set whenever the limiter was asked.
type CheckResult struct {
	Verification Verification
	Decision     rate.Decision
}

// appOf is the app a call is for: its own, or the default app.
func (s *Service) appOf(a *App) App {
	if a == nil {
		return s.defaultApp
	}
	return *a
}

// Bounded gives a call to a backing service its own deadline, so a slow Redis or
// Postgres turns into a prompt 503 instead of a hanging request; d <= 0 sets none.
func Bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Verifier is the send-and-check service the public API calls; *Service implements it,
// and metrics decorate it.
type Verifier interface {
	// Send sends or resends a code. The result's Decision is set whenever the limiter was
	// asked, also with an error; with *ErrRateLimited it is the refusal's own.
	// Errors: *ErrInvalidRequest, *contact.ErrInvalidPhone, *ErrCountryNotAllowed,
	// ErrDuplicateSubmit, *ErrRateLimited, *ErrFraudBlocked, *ErrBlocked, *ErrProvider, and
	// errors wrapping ErrUnavailable.
	Send(ctx context.Context, in SendInput) (SendResult, error)
	// Check proves a code. The result's Decision is set whenever the limiter was asked,
	// as with Send. Errors: *ErrInvalidRequest, *ErrInvalidCode, ErrTooManyAttempts,
	// ErrNotFound, ErrExpired, *ErrRateLimited, and errors wrapping ErrUnavailable.
	Check(ctx context.Context, in CheckInput) (CheckResult, error)
	// SendLimitState reports the client IP's send limit without recording anything, for
	// rate-limit headers on responses that never reached the limiter. Errors wrap ErrUnavailable.
	SendLimitState(ctx context.Context, clientIP string) (rate.Decision, error)
}

var _ Verifier = (*Service)(nil)
