package contact

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/width"
)

// maxPhoneInput bounds what the parser is given; real numbers with formatting are far shorter.
const maxPhoneInput = 64

// NormalizePhone parses a phone number as a user may type it — with spaces, dashes,
// brackets, dots or full-width characters — and returns it in E.164 with its ISO
// 3166 region. Numbers without a leading + are read in defaultRegion.
// Errors are *ErrInvalidPhone.
func NormalizePhone(raw, defaultRegion string) (e164, region string, err error) {
	if len(raw) > maxPhoneInput*3 { // full-width runes take 3 bytes each
		return "", "", &ErrInvalidPhone{Reason: "too long"}
	}
	// Full-width digits, plus and dashes become ASCII, so every spelling of one
	// number shares one limiter key.
	s := strings.TrimSpace(width.Narrow.String(raw))
	if s == "" {
		return "", "", &ErrInvalidPhone{Reason: "empty"}
	}
	if len([]rune(s)) > maxPhoneInput {
		return "", "", &ErrInvalidPhone{Reason: "too long"}
	}
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.' || r == '/' || r == '\u2010' || r == '\u2212':
		default:
			// Letters (vanity numbers, "ext") and other symbols are refused rather than
			// guessed at: a code must go to exactly the number the user meant.
			return "", "", &ErrInvalidPhone{Reason: "contains characters other than digits, +, spaces, dashes, dots and brackets"}
		}
	}
	if !strings.HasPrefix(s, "+") && defaultRegion == "" {
		return "", "", &ErrInvalidPhone{Reason: "must start with + and a country code"}
	}
	num, err := phonenumbers.Parse(s, strings.ToUpper(defaultRegion))
	if err != nil {
		return "", "", &ErrInvalidPhone{Reason: "not a phone number"}
	}
	if !phonenumbers.IsValidNumber(num) {
		return "", "", &ErrInvalidPhone{Reason: "not a valid number"}
	}
	return phonenumbers.Format(num, phonenumbers.E164), phonenumbers.GetRegionCodeForNumber(num), nil
}

// Number types, as the phone library tells them from its numbering plans.
const (
	NumberMobile        = "mobile"
	NumberFixedLine     = "fixed_line"
	NumberFixedOrMobile = "fixed_line_or_mobile"
	NumberTollFree      = "toll_free"
	NumberPremiumRate   = "premium_rate"
	NumberSharedCost    = "shared_cost"
	NumberVoIP          = "voip"
	NumberPersonal      = "personal_number"
	NumberPager         = "pager"
	NumberUAN           = "uan"
	NumberVoicemail     = "voicemail"
	NumberUnknownType   = "unknown"
)

// NumberTypes lists every number type PhoneType answers.
func NumberTypes() []string {
	return []string{NumberMobile, NumberFixedLine, NumberFixedOrMobile, NumberTollFree, NumberPremiumRate,
		NumberSharedCost, NumberVoIP, NumberPersonal, NumberPager, NumberUAN, NumberVoicemail, NumberUnknownType}
}

// DefaultDeniedNumberTypes are the types codes are not sent to by SMS or voice unless an
// operator says otherwise: numbers whose calls and messages pay their holder, or that
// reach no one person (SMS pumping's favourite ranges).
func DefaultDeniedNumberTypes() []string {
	return []string{NumberPremiumRate, NumberSharedCost, NumberUAN, NumberPager, NumberPersonal}
}

// PhoneType returns the type of an E.164 number; NumberUnknownType when the phone library
// cannot tell it.
func PhoneType(e164 string) string {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return NumberUnknownType
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.MOBILE:
		return NumberMobile
	case phonenumbers.FIXED_LINE:
		return NumberFixedLine
	case phonenumbers.FIXED_LINE_OR_MOBILE:
		return NumberFixedOrMobile
	case phonenumbers.TOLL_FREE:
		return NumberTollFree
	case phonenumbers.PREMIUM_RATE:
		return NumberPremiumRate
	case phonenumbers.SHARED_COST:
		return NumberSharedCost
	case phonenumbers.VOIP:
		return NumberVoIP
	case phonenumbers.PERSONAL_NUMBER:
		return NumberPersonal
	case phonenumbers.PAGER:
		return NumberPager
	case phonenumbers.UAN:
		return NumberUAN
	case phonenumbers.VOICEMAIL:
		return NumberVoicemail
	}
	return NumberUnknownType
}

// ErrInvalidPhone means the phone number could not be parsed or is not a valid number.
type ErrInvalidPhone struct {
	Reason string
}

func (e *ErrInvalidPhone) Error() string { return "invalid phone: " + e.Reason }
