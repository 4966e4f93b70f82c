package otp

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/psd2"
	"otpgate/internal/text"
)

func TestDecide(t *testing.T) {
	s := &Service{cfg: Config{Secret: []byte("k")}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := Verification{ID: "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d", Status: StatusPending, MaxAttempts: 3, ExpiresAt: now.Add(time.Minute)}
	base.CodeHashes = [][]byte{hashCode(s.cfg.Secret, base.ID, "123456")}
	with := func(f func(*Verification)) Verification { v := base; f(&v); return v }

	tests := []struct {
		name         string
		v            Verification
		code         string
		wantOutcome  CheckOutcome
		wantStatus   Status
		wantAttempts int
	}{
		{"RightCodeApproves", base, "123456", OutcomeApproved, StatusApproved, 0},
		{"WrongCodeCounts", base, "000000", OutcomeInvalidCode, StatusPending, 1},
		{"LastWrongGuessKills", with(func(v *Verification) { v.Attempts = 2 }), "000000", OutcomeInvalidCode, StatusFailed, 3},
		{"SpentBudgetRefusesRightCode", with(func(v *Verification) { v.Attempts = 3 }), "123456", OutcomeTooManyAttempts, StatusFailed, 3},
		{"ExpiredAtDeadline", with(func(v *Verification) { v.ExpiresAt = now }), "123456", OutcomeExpired, StatusExpired, 0},
		{"AlreadyApproved", with(func(v *Verification) { v.Status = StatusApproved }), "123456", OutcomeNotPending, StatusApproved, 0},
		{"Canceled", with(func(v *Verification) { v.Status = StatusCanceled }), "123456", OutcomeNotPending, StatusCanceled, 0},
		{"Dead", with(func(v *Verification) { v.Status = StatusFailed }), "123456", OutcomeTooManyAttempts, StatusFailed, 0},
		{"ClosedExpired", with(func(v *Verification) { v.Status = StatusExpired }), "123456", OutcomeExpired, StatusExpired, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, outcome := s.decide(tt.v, tt.code, psd2.Transaction{}, now)
			if outcome != tt.wantOutcome || v.Status != tt.wantStatus || v.Attempts != tt.wantAttempts {
				t.Errorf("got %s %s attempts=%d, want %s %s attempts=%d", outcome, v.Status, v.Attempts, tt.wantOutcome, tt.wantStatus, tt.wantAttempts)
			}
			if v.Status != StatusPending && tt.v.Status == StatusPending && !v.ClosedAt.Equal(now) {
				t.Errorf("closed_at got %v, want %v", v.ClosedAt, now)
			}
		})
	}
}

func TestCheckInput(t *testing.T) {
	const id = "0190b5e4-6f7c-7b3a-9d4e-2c1f0a9b8c7d"
	tests := []struct {
		name string
		in   CheckInput
		want map[string]string // nil: valid
	}{
		{"ByPhone", CheckInput{Phone: "+819012345678", Code: "123456"}, nil},
		{"ByID", CheckInput{ID: id, Code: "123456"}, nil},
		{"ByUppercaseID", CheckInput{ID: strings.ToUpper(id), Code: "000000"}, nil},
		{"Neither", CheckInput{Code: "123456"}, map[string]string{"phone": `one of "phone", "email" or "id" is required`}},
		{"Both", CheckInput{Phone: "+819012345678", ID: id, Code: "123456"}, map[string]string{"id": `give one of "phone", "email" or "id", not several`}},
		{"IDNotUUID", CheckInput{ID: "42", Code: "123456"}, map[string]string{"id": "must be a verification id (UUID)"}},
		{"IDInBraces", CheckInput{ID: "{" + id + "}", Code: "123456"}, map[string]string{"id": "must be a verification id (UUID)"}},
		{"IDAsURN", CheckInput{ID: "urn:uuid:" + id, Code: "123456"}, map[string]string{"id": "must be a verification id (UUID)"}},
		{"CodeTooShort", CheckInput{Phone: "+819012345678", Code: "12345"}, map[string]string{"code": "must be 6 digits"}},
		{"CodeTooLong", CheckInput{Phone: "+819012345678", Code: "1234567"}, map[string]string{"code": "must be 6 digits"}},
		{"CodeNotDigits", CheckInput{Phone: "+819012345678", Code: "12345a"}, map[string]string{"code": "must be 6 digits"}},
		{"CodeFullWidthDigits", CheckInput{Phone: "+819012345678", Code: "１２３４５６"}, map[string]string{"code": "must be 6 digits"}},
		{"CodeMissing", CheckInput{Phone: "+819012345678"}, map[string]string{"code": "must be 6 digits"}},
		{"AllWrong", CheckInput{ID: "x", Code: "x"}, map[string]string{"id": "must be a verification id (UUID)", "code": "must be 6 digits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := invalidFields(checkInput(tt.in, App{CodeLength: 6})); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSendTarget(t *testing.T) {
	const phone = "+819012345678"
	allLocales := "must be " + text.QuoteOr(contact.KnownLocales())
	tests := []struct {
		name                    string
		in                      SendInput
		carried                 []string          // nil: every channel
		want                    map[string]string // nil: valid
		wantChannel, wantLocale string
		wantAddress             string
	}{
		{"OnlyPhoneGetsDefaults", SendInput{Phone: phone}, nil, nil, "sms", "ja", phone},
		{"CountrysLanguage", SendInput{Phone: "+5511987654321"}, nil, nil, "sms", "pt-BR", "+5511987654321"},
		{"CountryWithoutItsLanguage", SendInput{Phone: "+2348031234567"}, nil, nil, "sms", "en", "+2348031234567"},
		{"BlankLocaleIsNone", SendInput{Phone: "+33612345678", Locale: " "}, nil, nil, "sms", "fr", "+33612345678"},
		{"Everything", SendInput{Phone: phone, Channel: "sms", Locale: "en"}, nil, nil, "sms", "en", phone},
		{"Japanese", SendInput{Phone: phone, Locale: "ja"}, nil, nil, "sms", "ja", phone},
		{"LocaleAnyCase", SendInput{Phone: phone, Locale: "pt-br"}, nil, nil, "sms", "pt-BR", phone},
		{"LocaleAlias", SendInput{Phone: phone, Locale: "zh-TW"}, nil, nil, "sms", "zh-Hant", phone},
		{"Voice", SendInput{Phone: phone, Channel: "voice"}, nil, nil, "voice", "ja", phone},
		{"ChannelCase", SendInput{Phone: phone, Channel: "WhatsApp"}, []string{"sms", "whatsapp"}, map[string]string{"channel": `must be "sms" or "whatsapp"`}, "", "", ""},
		{"WhatsApp", SendInput{Phone: phone, Channel: "whatsapp"}, nil, nil, "whatsapp", "ja", phone},
		{"EmailAlone", SendInput{Email: "Ana@Example.COM"}, nil, nil, "email", "en", "Ana@example.com"},
		{"EmailChannel", SendInput{Email: "ana@example.com", Channel: "email", Locale: "de"}, nil, nil, "email", "de", "ana@example.com"},
		{"PhoneMissing", SendInput{}, nil, map[string]string{"phone": "is required"}, "", "", ""},
		{"PhoneBlank", SendInput{Phone: " \t\u3000"}, nil, map[string]string{"phone": "is required"}, "", "", ""},
		{"EmailMissing", SendInput{Channel: "email"}, nil, map[string]string{"email": "is required for the email channel"}, "", "", ""},
		{"PhoneForEmail", SendInput{Channel: "email", Phone: phone, Email: "a@example.com"}, nil,
			map[string]string{"phone": `give "email" instead for the email channel`}, "", "", ""},
		{"EmailForSMS", SendInput{Channel: "sms", Phone: phone, Email: "a@example.com"}, nil,
			map[string]string{"email": `is only for the email channel; give "phone" for "sms"`}, "", "", ""},
		{"UncarriedChannel", SendInput{Phone: phone, Channel: "voice"}, []string{"sms", "email"},
			map[string]string{"channel": `must be "sms" or "email"`}, "", "", ""},
		{"UnknownChannel", SendInput{Phone: phone, Channel: "fax"}, []string{"sms"}, map[string]string{"channel": `must be "sms"`}, "", "", ""},
		{"UnknownLocale", SendInput{Phone: phone, Locale: "xx"}, nil,
			map[string]string{"locale": allLocales}, "", "", ""},
		{"AllWrong", SendInput{Channel: "x", Locale: "x"}, []string{"sms"},
			map[string]string{"phone": "is required", "channel": `must be "sms"`, "locale": allLocales}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Service{channels: tt.carried}
			if s.channels == nil {
				s.channels = Channels()
			}
			got, err := s.sendTarget(tt.in, Config{}.DefaultApp())
			if fields := invalidFields(err); !reflect.DeepEqual(fields, tt.want) {
				t.Fatalf("got %v, want %v", fields, tt.want)
			}
			if tt.want != nil {
				return
			}
			if got.channel != tt.wantChannel || got.locale != tt.wantLocale || got.address != tt.wantAddress {
				t.Errorf("got channel %q locale %q address %q, want %q %q %q", got.channel, got.locale, got.address, tt.wantChannel, tt.wantLocale, tt.wantAddress)
			}
		})
	}
}

// invalidFields returns the fields of an *ErrInvalidRequest, nil for no error, and a
// marker for any other error so that it never passes for a valid input.
func invalidFields(err error) map[string]string {
	var ir *ErrInvalidRequest
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ir):
		return ir.Fields
	default:
		return map[string]string{"unexpected error": err.Error()}
	}
}
