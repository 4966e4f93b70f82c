package apps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/history"
	"otpgate/internal/otp"
	"otpgate/internal/pii"
	"otpgate/internal/seal"
)

// MaxTestNumberLife bounds how far ahead a test number may expire: a forgotten entry
// becomes an ordinary number again within a year.
const MaxTestNumberLife = 366 * 24 * time.Hour

// TestNumber is one test number of an app as the store keeps it: its fixed code sealed,
// never in plain.
type TestNumber struct {
	ID    string
	AppID string
	// Address is the E.164 number or the normalised email address.
	Address string
	// Sealed is the fixed code, sealed by a CodeSealer for this id.
	Sealed    []byte
	ExpiresAt time.Time
	CreatedAt time.Time
}

// NewTestNumber asks for a test number: an address (a phone number in any form the
// default region reads, or an email address), its fixed code and when it stops working.
type NewTestNumber struct {
	Address   string
	Code      string
	ExpiresAt time.Time
}

// TestNumberInfo is a test number as the admin sees it: its code masked.
type TestNumberInfo struct {
	ID, AppID, Address string
	// MaskedCode shows the code's length and its last two digits, such as "••••42".
	MaskedCode string
	ExpiresAt  time.Time
	CreatedAt  time.Time
}

// Active reports whether the number still works at now.
func (t TestNumberInfo) Active(now time.Time) bool { return now.Before(t.ExpiresAt) }

// Audit log actions of test numbers.
const (
	ActionTestNumberAdd    = "test_number_add"
	ActionTestNumberRemove = "test_number_remove"
)

// validate checks a request against the app and normalises its address. Errors:
// *otp.ErrInvalidRequest naming address, code or expires_at.
func (n NewTestNumber) validate(app otp.App, region string, now time.Time) (string, error) {
	f := map[string]string{}
	address := strings.TrimSpace(n.Address)
	switch {
	case address == "":
		f["address"] = "is required: a phone number or an email address"
	case strings.Contains(address, "@"):
		if a, err := contact.NormalizeEmail(address); err == nil {
			address = a
		} else {
			f["address"] = "must be a phone number or an email address"
		}
	default:
		if a, _, err := contact.NormalizePhone(address, region); err == nil {
			address = a
		} else {
			f["address"] = "must be a phone number in E.164 (or an email address)"
		}
	}
	if len(n.Code) != app.CodeLength || strings.Trim(n.Code, "0123456789") != "" {
		f["code"] = fmt.Sprintf("must be %d digits, the app's code length", app.CodeLength)
	}
	switch {
	case !n.ExpiresAt.After(now):
		f["expires_at"] = "must be in the future"
	case n.ExpiresAt.Sub(now) > MaxTestNumberLife:
		f["expires_at"] = "must be at most a year ahead"
	}
	if len(f) > 0 {
		return "", &otp.ErrInvalidRequest{Fields: f}
	}
	return address, nil
}

// mask shows a code's length and its last two digits.
func mask(code string) string {
	if len(code) <= 2 {
		return strings.Repeat("•", len(code))
	}
	return strings.Repeat("•", len(code)-2) + code[len(code)-2:]
}

// CodeSealer keeps test numbers' fixed codes unreadable at rest: AES-256-GCM with a key
// derived from OTP_SECRET, bound to the entry's id. Changing OTP_SECRET makes existing
// test numbers unreadable: they are skipped, with a warning, until added again.
type CodeSealer struct {
	box *seal.Box
}

// codeSealLabel separates this key from every other use of OTP_SECRET.
const codeSealLabel = "otpgate app test number codes v1"

// NewCodeSealer derives the sealing key from secret (OTP_SECRET).
func NewCodeSealer(secret []byte) (*CodeSealer, error) {
	box, err := seal.New(secret, codeSealLabel)
	if err != nil {
		return nil, fmt.Errorf("apps: code sealer: %w", err)
	}
	return &CodeSealer{box: box}, nil
}

// Seal encrypts the code of test number id.
func (s *CodeSealer) Seal(id, code string) []byte { return s.box.Seal(id, []byte(code)) }

// errUnsealCode says why a code cannot be read without saying anything about it.
var errUnsealCode = errors.New("the test number's code cannot be read with this OTP_SECRET; add it again")

// Open decrypts the code of test number id.
func (s *CodeSealer) Open(id string, sealed []byte) (string, error) {
	plain, ok := s.box.Open(id, sealed)
	if !ok {
		return "", errUnsealCode
	}
	return string(plain), nil
}

// TestNumbers implements AdminService: the app's test numbers, expired ones included,
// newest first, their codes masked.
func (a *Admin) TestNumbers(ctx context.Context, appID string) ([]TestNumberInfo, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return nil, err
	}
	list, err := a.store.TestNumbers(ctx, app.ID)
	if err != nil {
		return nil, fmt.Errorf("apps: test numbers: %w", err)
	}
	out := make([]TestNumberInfo, len(list))
	for i, t := range list {
		out[i] = a.info(t)
	}
	return out, nil
}

// info is t as the admin sees it; a code this secret cannot open shows as unreadable.
func (a *Admin) info(t TestNumber) TestNumberInfo {
	masked := "unreadable"
	if a.registry.Sealer != nil {
		if code, err := a.registry.Sealer.Open(t.ID, t.Sealed); err == nil {
			masked = mask(code)
		}
	}
	return TestNumberInfo{ID: t.ID, AppID: t.AppID, Address: t.Address, MaskedCode: masked, ExpiresAt: t.ExpiresAt, CreatedAt: t.CreatedAt}
}

// testNumberChange is a test number as the audit log shows it: its address masked, never its code.
type testNumberChange struct {
	ID        string    `json:"id"`
	Address   string    `json:"address"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (t TestNumber) change() testNumberChange {
	return testNumberChange{ID: t.ID, Address: pii.Mask(t.Address), ExpiresAt: t.ExpiresAt}
}

// AddTestNumber implements AdminService.
func (a *Admin) AddTestNumber(ctx context.Context, appID string, n NewTestNumber, actor string) (TestNumberInfo, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return TestNumberInfo{}, err
	}
	if a.registry.Sealer == nil {
		return TestNumberInfo{}, errors.New("apps: add test number: no code sealer")
	}
	now := a.Now().Truncate(time.Microsecond)
	address, err := n.validate(app, a.DefaultRegion, now)
	if err != nil {
		return TestNumberInfo{}, err
	}
	t := TestNumber{ID: a.NewID(), AppID: app.ID, Address: address, ExpiresAt: n.ExpiresAt.UTC().Truncate(time.Microsecond), CreatedAt: now}
	t.Sealed = a.registry.Sealer.Seal(t.ID, n.Code)
	detail := fmt.Sprintf("app %s; address %s; expires %s", app.ID, pii.Mask(address), t.ExpiresAt.Format(time.RFC3339))
	if err := a.store.CreateTestNumber(ctx, t, withChange(audit(ActionTestNumberAdd, app.ID, detail, actor), "", history.Change(t.change()))); err != nil {
		return TestNumberInfo{}, fmt.Errorf("apps: add test number: %w", err)
	}
	a.refresh(ctx)
	return a.info(t), nil
}

// RemoveTestNumber implements AdminService.
func (a *Admin) RemoveTestNumber(ctx context.Context, appID, id, actor string) (TestNumberInfo, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return TestNumberInfo{}, err
	}
	// Read first for the audit's Before: one removed meanwhile is not found, as it would be.
	all, err := a.store.TestNumbers(ctx, app.ID)
	if err != nil {
		return TestNumberInfo{}, fmt.Errorf("apps: remove test number: %w", err)
	}
	i := slices.IndexFunc(all, func(t TestNumber) bool { return strings.EqualFold(t.ID, id) })
	if i < 0 {
		return TestNumberInfo{}, fmt.Errorf("apps: remove test number: %w", otp.ErrNotFound)
	}
	t, err := a.store.DeleteTestNumber(ctx, app.ID, id, withChange(audit(ActionTestNumberRemove, app.ID, "test number "+id, actor), history.Change(all[i].change()), ""))
	if err != nil {
		return TestNumberInfo{}, fmt.Errorf("apps: remove test number: %w", err)
	}
	a.refresh(ctx)
	return a.info(t), nil
}
