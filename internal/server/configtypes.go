package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"otpgate/internal/fraud"
	"otpgate/internal/otp"
)

// prefixes is a comma-separated list of CIDRs and single addresses, such as
// "10.0.0.0/8,192.0.2.7": an address is its own /32 or /128, host bits are masked off,
// and empty entries are skipped.
type prefixes []netip.Prefix

// UnmarshalText reads the list; a bad entry is an error naming its place.
func (p *prefixes) UnmarshalText(text []byte) error {
	var out prefixes
	for i, part := range strings.Split(string(text), ",") {
		s := strings.TrimSpace(part)
		if s == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return fmt.Errorf("entry %d %q: not a CIDR or an address, such as 10.0.0.0/8 or 192.0.2.7", i+1, part)
			}
			// An IPv4 address written as IPv6 (::ffff:192.0.2.7) matches the IPv4 peer it is.
			a = a.Unmap()
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	*p = out
	return nil
}

// retentionSpan is OTP_HISTORY_RETENTION: a span as the fraud settings write theirs, such
// as 90d or 2160h, or off (also 0) to keep history for ever, which is 0.
type retentionSpan time.Duration

// UnmarshalText reads the span or off.
func (r *retentionSpan) UnmarshalText(text []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(text))) {
	case "off", "0", "0s", "0d":
		*r = 0
		return nil
	}
	var s fraud.Span
	if err := s.UnmarshalText(text); err != nil {
		return errors.New("not a duration, such as 90d or 2160h, nor off")
	}
	*r = retentionSpan(s)
	return nil
}

// logLevel is OTP_LOG_LEVEL: debug, info, warn or error, in any letter case.
type logLevel struct{ slog.Level }

// UnmarshalText accepts the four levels and nothing else (slog would also take "warn+2").
func (l *logLevel) UnmarshalText(text []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(text))) {
	case "debug":
		l.Level = slog.LevelDebug
	case "info":
		l.Level = slog.LevelInfo
	case "warn":
		l.Level = slog.LevelWarn
	case "error":
		l.Level = slog.LevelError
	default:
		return errors.New("must be debug, info, warn or error")
	}
	return nil
}

// defaultAccess is OTP_DEFAULT_APP_ACCESS: who may call the default app, public, key or
// off, in any letter case.
type defaultAccess otp.Access

// UnmarshalText accepts the three modes and nothing else.
func (a *defaultAccess) UnmarshalText(text []byte) error {
	switch m := otp.Access(strings.ToLower(strings.TrimSpace(string(text)))); m {
	case otp.AccessPublic, otp.AccessKey, otp.AccessOff:
		*a = defaultAccess(m)
	default:
		return errors.New("must be public, key or off")
	}
	return nil
}

// envError turns what caarlos0/env reports into one line that names, for each bad field,
// its variable and the text it was given: `config: OTP_X="bad": what is wrong`.
// values holds the text of every variable, set or defaulted.
func envError(err error, values map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("config: %w", err)
	}
	lines := make([]string, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			lines = append(lines, e.Error())
			continue
		}
		key := envKey(pe.Name)
		lines = append(lines, fmt.Sprintf("%s=%q: %s", key, values[key], parseProblem(pe)))
	}
	return errors.New("config: " + strings.Join(lines, "; "))
}

// envKey is the variable a config field is read from. env.FieldParams does not carry the
// field's name, so this reads the field's tag as env does: the name before any option.
func envKey(field string) string {
	f, ok := reflect.TypeFor[config]().FieldByName(field)
	if !ok {
		return field
	}
	key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
	return key
}

// parseProblem says what is wrong with a value in words an operator reads: the
// unmarshaler's own message, or plain words for the built-in types, whose errors would
// quote the value a second time.
func parseProblem(pe env.ParseError) string {
	if pe.Type == reflect.TypeFor[time.Duration]() {
		return "not a duration, such as 500ms, 5s or 1h"
	}
	var ne *strconv.NumError
	if errors.As(pe.Err, &ne) {
		switch {
		case ne.Func == "ParseBool":
			return "must be true or false"
		case ne.Func == "ParseFloat":
			return "not a number"
		case errors.Is(ne.Err, strconv.ErrRange):
			return "out of range"
		default:
			return "not a whole number"
		}
	}
	return pe.Err.Error()
}
