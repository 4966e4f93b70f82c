package admin

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/history"
	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

// adminParams reads the query parameters of the console and the API, normalising
// phones and IPs the way the public API keys them.
type adminParams struct {
	region   string
	v6prefix int
	now      func() time.Time
}

// Defaults of the stats range.
const (
	defaultStatsSince  = 24 * time.Hour
	defaultStatsBucket = time.Hour
)

// sendFilter reads phone, ip, status, from, to, limit and cursor; problems maps each
// bad parameter to what is wrong with it.
func (p adminParams) sendFilter(q url.Values) (f history.SendFilter, problems map[string]string) {
	problems = map[string]string{}
	if raw := strings.TrimSpace(q.Get("app")); raw != "" {
		id, ok := otp.CanonAppID(raw)
		if !ok {
			problems["app"] = "must be an app id or default"
		}
		f.AppID = id
	}
	if raw := strings.TrimSpace(q.Get("phone")); raw != "" {
		phone, err := p.phone(raw)
		if err != nil {
			problems["phone"] = err.Error()
		}
		f.Phone = phone
	}
	if raw := strings.TrimSpace(q.Get("ip")); raw != "" {
		ip, err := p.ipKey(raw)
		if err != nil {
			problems["ip"] = err.Error()
		}
		f.ClientIP = ip
	}
	f.Status = strings.TrimSpace(q.Get("status"))
	var err error
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if raw := strings.TrimSpace(q.Get(t.name)); raw != "" {
			if *t.dst, err = parseAdminTime(raw); err != nil {
				problems[t.name] = err.Error()
			}
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		problems["to"] = "must be after from"
	}
	if raw := strings.TrimSpace(q.Get("limit")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > history.MaxListLimit {
			problems["limit"] = fmt.Sprintf("must be a whole number from 1 to %d", history.MaxListLimit)
		}
		f.Limit = n
	}
	f.After, err = parseCursor(strings.TrimSpace(q.Get("cursor")))
	if fields, bad := invalidFields(err); bad {
		maps.Copy(problems, fields)
	}
	// The store checks the status too; asking here lists it with the other parameters'
	// problems in one answer.
	if fields, bad := invalidFields(f.Validate()); bad {
		maps.Copy(problems, fields)
	}
	return f, problems
}

// phone normalises a phone filter to E.164 as the public API does, so any spelling of
// a number finds its history and its limits; an email address (it holds an @) is
// normalised as the email channel does. The error says what is wrong, for people.
func (p adminParams) phone(raw string) (string, error) {
	if strings.Contains(raw, "@") {
		addr, err := contact.NormalizeEmail(raw)
		var bad *contact.ErrInvalidEmail
		if errors.As(err, &bad) {
			return "", errors.New(bad.Reason)
		}
		return addr, err
	}
	e164, _, err := contact.NormalizePhone(raw, p.region)
	var bad *contact.ErrInvalidPhone
	if errors.As(err, &bad) {
		return "", errors.New(bad.Reason)
	}
	return e164, err
}

// filterQuery renders a filter as the query of a console link, times in RFC 3339.
func filterQuery(f history.SendFilter) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"app": f.AppID, "phone": f.Phone, "ip": f.ClientIP, "status": f.Status, "cursor": encodeCursor(f.After)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.From.IsZero() {
		q.Set("from", f.From.Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		q.Set("to", f.To.Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// parseAdminTime reads RFC 3339, or the value of a datetime-local input (with or
// without seconds, or a bare date), which has no zone and is read as UTC.
func parseAdminTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("must be a time in RFC 3339, such as 2030-01-02T15:04:05Z")
}

// ipKey turns an IP filter into the form the limiter and history key clients by: an
// IPv4 address as is, an IPv6 address or network as its /v6prefix network.
func (p adminParams) ipKey(raw string) (string, error) {
	if key, ok := httpkit.IPKey(raw, p.v6prefix); ok {
		return key, nil
	}
	pfx, err := netip.ParsePrefix(raw)
	if err != nil {
		return "", errors.New("must be an IPv4 or IPv6 address")
	}
	a := pfx.Addr().WithZone("").Unmap()
	switch {
	case a.Is4() && pfx.Bits() == 32, a.Is6() && pfx.Bits() >= p.v6prefix:
		key, _ := httpkit.IPKey(a.String(), p.v6prefix)
		return key, nil
	case a.Is6():
		return "", fmt.Errorf("IPv6 clients are keyed by their /%d network; give an address or a /%d", p.v6prefix, p.v6prefix)
	}
	return "", errors.New("must be a single IPv4 address")
}

// target reads phone= or ip=. Neither is a zero target without problems; both, or a
// bad value, are problems.
func (p adminParams) target(q url.Values) (limitTarget, map[string]string) {
	phone, ip := strings.TrimSpace(q.Get("phone")), strings.TrimSpace(q.Get("ip"))
	switch {
	case phone != "" && ip != "":
		return limitTarget{}, map[string]string{"ip": "give either phone or ip, not both"}
	case phone != "":
		e164, err := p.phone(phone)
		if err != nil {
			return limitTarget{}, map[string]string{"phone": err.Error()}
		}
		return limitTarget{history.LimitTarget{Kind: history.TargetPhone, Key: e164}}, nil
	case ip != "":
		key, err := p.ipKey(ip)
		if err != nil {
			return limitTarget{}, map[string]string{"ip": err.Error()}
		}
		return limitTarget{history.LimitTarget{Kind: history.TargetIP, Key: key}}, nil
	}
	return limitTarget{}, nil
}

// requiredTarget is target for what needs one, inspecting by API and resetting:
// neither phone nor ip is a problem too.
func (p adminParams) requiredTarget(q url.Values) (limitTarget, map[string]string) {
	t, problems := p.target(q)
	if len(problems) == 0 && t.Kind == "" {
		problems = map[string]string{"phone": "give phone or ip"}
	}
	return t, problems
}

// statsRange reads since (RFC 3339, or a span back from now such as 24h or 7d),
// bucket (a span such as 1h or 1d) and app (an app id or default; none is every app).
func (p adminParams) statsRange(q url.Values) (since time.Time, bucket time.Duration, app string, problems map[string]string) {
	problems = map[string]string{}
	if raw := strings.TrimSpace(q.Get("app")); raw != "" {
		id, ok := otp.CanonAppID(raw)
		if !ok {
			problems["app"] = "must be an app id or default"
		}
		app = id
	}
	since, bucket = p.now().Add(-defaultStatsSince), defaultStatsBucket
	if raw := strings.TrimSpace(q.Get("since")); raw != "" {
		if d, err := parseSpan(raw); err == nil {
			since = p.now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339Nano, raw); err == nil {
			since = t.UTC()
		} else {
			problems["since"] = "must be a time in RFC 3339 or a span back from now, such as 24h or 7d"
		}
	}
	if raw := strings.TrimSpace(q.Get("bucket")); raw != "" {
		d, err := parseSpan(raw)
		if err != nil {
			problems["bucket"] = "must be a span such as 15m, 1h or 1d"
		}
		bucket = d
	}
	return since, bucket, app, problems
}

// deliveryRange reads since (RFC 3339, or a span back from now such as 24h or 7d; 24h
// when absent) and app (an app id or default; none is every app).
func (p adminParams) deliveryRange(q url.Values) (since time.Time, app string, problems map[string]string) {
	since, _, app, problems = p.statsRange(url.Values{"since": q["since"], "app": q["app"]})
	return since, app, problems
}

// parseSpan reads a positive Go duration, or whole days such as "7d".
func parseSpan(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3650 {
			return 0, errors.New("bad number of days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("not a positive duration")
	}
	return d, nil
}
