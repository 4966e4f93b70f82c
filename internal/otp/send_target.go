package otp

import (
	"slices"
	"strings"

	"otpgate/internal/contact"
	"otpgate/internal/psd2"
	"otpgate/internal/templates"
	"otpgate/internal/text"
)

// target is where a send goes, as checked before anything is spent.
type target struct {
	channel, locale string
	// address is the E.164 number, or for email the normalised address: what the
	// verification, its history and its per-address limits are keyed by.
	address string
	// region is the number's ISO 3166 country; empty for email.
	region string
	// test is the app's test number at address, when it has one that works now.
	test *TestNumber
}

// email reports whether the target is an email address rather than a phone.
func (t target) email() bool { return t.channel == ChannelEmail }

// sendTarget refuses malformed sends before anything is spent, listing every bad field,
// fills in the defaults of channel and locale (the number's country's language, see
// CountryLocale), and normalises the address: an email address for the email channel, a
// phone number in an allowed country for the others.
func (s *Service) sendTarget(in SendInput, app App) (target, error) {
	t := target{channel: in.Channel, locale: in.Locale}
	if t.channel == "" {
		t.channel = ChannelSMS
		if in.Email != "" && in.Phone == "" {
			t.channel = ChannelEmail
		}
	}
	fields := map[string]string{}
	if accepted := s.acceptedChannels(app); !slices.Contains(accepted, t.channel) {
		fields["channel"] = "must be " + text.QuoteOr(accepted)
	}
	auto := strings.TrimSpace(t.locale) == ""
	if l, ok := contact.CanonLocale(t.locale); ok && s.offersLocale(app, l) {
		t.locale = l
	} else if !auto {
		fields["locale"] = "must be " + text.QuoteOr(app.acceptedLocales())
	}
	switch {
	case t.channel == ChannelEmail && strings.TrimSpace(in.Email) == "":
		fields["email"] = "is required for the email channel"
	case t.channel == ChannelEmail && in.Phone != "":
		fields["phone"] = `give "email" instead for the email channel`
	case t.channel != ChannelEmail && in.Email != "":
		fields["email"] = `is only for the email channel; give "phone" for ` + text.QuoteOr([]string{t.channel})
	case t.channel != ChannelEmail && strings.TrimSpace(in.Phone) == "":
		fields["phone"] = "is required"
	}
	if problem := templates.FriendlyNameProblem(in.FriendlyName); problem != "" {
		fields["friendly_name"] = problem
	}
	psd2.Check(in.Transaction, app.PSD2, fields)
	checkKeyedLimits(in.RateLimits, fields)
	if len(fields) > 0 {
		return t, &ErrInvalidRequest{Fields: fields}
	}
	var err error
	if t.email() {
		t.address, err = contact.NormalizeEmail(in.Email)
	} else {
		t.address, t.region, err = s.normalizePhone(in.Phone)
	}
	if auto {
		// No locale named: the number's country's language (email has none: en).
		t.locale = s.defaultLocale(app, t.region)
	}
	if err != nil {
		return t, err
	}
	if t.test = s.testNumber(app, t.address); t.test != nil || t.email() {
		// Nothing is sent to a test number: the country and number-type rules guard messages.
		return t, nil
	}
	if !app.AllowsCountry(t.region) {
		return t, &ErrCountryNotAllowed{Country: t.region}
	}
	if t.channel == ChannelSMS || t.channel == ChannelVoice {
		denied := s.cfg.DeniedNumberTypes
		if app.DeniedNumberTypes != nil {
			denied = *app.DeniedNumberTypes
		}
		if len(denied) > 0 {
			if kind := s.phoneType(t.address); slices.Contains(denied, kind) {
				return t, &ErrNumberType{Type: kind}
			}
		}
	}
	return t, nil
}

// testNumber is the app's test number at address that works now; nil when none does.
func (s *Service) testNumber(app App, address string) *TestNumber {
	if len(app.TestNumbers) == 0 {
		return nil
	}
	if tn, ok := app.TestNumber(address, s.Now()); ok {
		return &tn
	}
	return nil
}

// acceptedChannels are the channels an app takes that a provider carries, in the order
// of channels.
func (s *Service) acceptedChannels(app App) []string {
	var out []string
	for _, ch := range channels {
		if app.AcceptsChannel(ch) && slices.Contains(s.channels, ch) {
			out = append(out, ch)
		}
	}
	return out
}

// defaultLocale is the locale of a send that names none: the number's country's
// (CountryLocale), else en, else the first the app accepts — the first of these that the
// app accepts and the renderer has.
func (s *Service) defaultLocale(app App, region string) string {
	for _, l := range [...]string{contact.CountryLocale(region), "en"} {
		if s.offersLocale(app, l) {
			return l
		}
	}
	for _, l := range app.acceptedLocales() {
		if s.offersLocale(app, l) {
			return l
		}
	}
	return "en"
}

// offersLocale reports whether a send of the app may be written in the built-in locale l.
func (s *Service) offersLocale(app App, l string) bool {
	return app.AcceptsLocale(l) && (s.renderer == nil || s.renderer.HasLocale(l))
}
