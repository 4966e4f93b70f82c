package fraud

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
)

// List names one of the two lists.
type List string

// The lists: the safe list skips the fraud scopes and the guard (never the phone, IP,
// duplicate or verification rules); the block list refuses a send before anything is spent.
const (
	SafeList  List = "safe"
	BlockList List = "block"
)

// Kind is what a list entry matches.
type Kind string

// Kinds of entries. Countries are for the block list only.
const (
	KindNumber  Kind = "number"
	KindPrefix  Kind = "prefix"
	KindCountry Kind = "country"
	KindCIDR    Kind = "cidr"
)

// ListEntry is one entry of the safe or block list.
type ListEntry struct {
	ID   int64
	List List
	Kind Kind
	// Value is the normalised entry: an E.164 number, a prefix of one ("+8190123"), an ISO
	// 3166 code, or a CIDR with its host bits masked.
	Value     string
	Note      string
	CreatedAt time.Time
}

// String names the entry as history and refusals do, such as "prefix +8190123"; a whole
// number masked (pii.Mask), as the audit log names it, since a refusal's reason is kept in
// the hourly rollups after the number's history is erased and is shown to every role.
func (e ListEntry) String() string { return string(e.Kind) + " " + e.shown() }

// maxNote bounds an entry's note.
const maxNote = 200

// NewListEntry validates and normalises an entry; kind may be empty, and is then told from
// the value: "+" and digits is a number when it is a valid one, else a prefix; two letters a
// country; an address or CIDR a cidr (an address is its own /32 or /128). Errors:
// *otp.ErrInvalidRequest naming "list", "kind", "value" or "note".
func NewListEntry(list, kind, value, note string) (ListEntry, error) {
	e := ListEntry{List: List(strings.ToLower(strings.TrimSpace(list))), Kind: Kind(strings.ToLower(strings.TrimSpace(kind))), Note: strings.TrimSpace(note)}
	bad := map[string]string{}
	if e.List != SafeList && e.List != BlockList {
		bad["list"] = `must be "safe" or "block"`
	}
	if len([]rune(e.Note)) > maxNote {
		bad["note"] = fmt.Sprintf("at most %d characters", maxNote)
	}
	v := strings.TrimSpace(value)
	if e.Kind == "" {
		e.Kind = guessKind(v)
	}
	switch e.Kind {
	case KindNumber:
		phone, _, err := contact.NormalizePhone(v, "")
		if err != nil || !strings.HasPrefix(v, "+") {
			bad["value"] = "not a valid number in E.164, such as +819012345678"
		}
		e.Value = phone
	case KindPrefix:
		digits := strings.TrimPrefix(v, "+")
		if !strings.HasPrefix(v, "+") || len(digits) < 1 || len(digits) > 14 || strings.Trim(digits, "0123456789") != "" {
			bad["value"] = "not a number prefix, such as +8190123 (a plus and 1 to 14 digits)"
		}
		e.Value = v
	case KindCountry:
		var r contact.Region
		if err := r.UnmarshalText([]byte(v)); err != nil || v == "" {
			bad["value"] = "not an ISO 3166 country code, such as NG"
		}
		e.Value = string(r)
		if e.List == SafeList {
			bad["kind"] = "the safe list takes numbers, prefixes and CIDRs, not countries"
		}
	case KindCIDR:
		p, err := parseCIDR(v)
		if err != nil {
			bad["value"] = "not a CIDR or an address, such as 203.0.113.0/24"
		}
		e.Value = p.String()
	default:
		if _, given := bad["value"]; !given {
			bad["kind"] = "must be number, prefix, country or cidr"
		}
	}
	if len(bad) > 0 {
		return ListEntry{}, &otp.ErrInvalidRequest{Fields: bad}
	}
	return e, nil
}

// guessKind tells a value's kind from its form; "" when it has none.
func guessKind(v string) Kind {
	switch {
	case strings.HasPrefix(v, "+"):
		if _, _, err := contact.NormalizePhone(v, ""); err == nil {
			return KindNumber
		}
		return KindPrefix
	case len(v) == 2 && strings.Trim(strings.ToUpper(v), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "":
		return KindCountry
	case strings.ContainsAny(v, ".:"):
		return KindCIDR
	}
	return ""
}

// parseCIDR reads a CIDR or a single address, masked; IPv4-mapped IPv6 counts as IPv4.
func parseCIDR(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// matcher finds the entries of one list that match a send, in constant time per prefix
// length: numbers and countries by value, prefixes by each leading part of the number,
// networks by each prefix length that the list holds.
type matcher struct {
	numbers   map[string]ListEntry
	prefixes  map[string]ListEntry
	countries map[string]ListEntry
	nets      map[netip.Prefix]ListEntry
	// bits are the prefix lengths of nets, per address family (4 and 6).
	bits map[int][]int
}

func newMatcher(entries []ListEntry) *matcher {
	m := &matcher{numbers: map[string]ListEntry{}, prefixes: map[string]ListEntry{}, countries: map[string]ListEntry{},
		nets: map[netip.Prefix]ListEntry{}, bits: map[int][]int{}}
	for _, e := range entries {
		switch e.Kind {
		case KindNumber:
			m.numbers[e.Value] = e
		case KindPrefix:
			m.prefixes[e.Value] = e
		case KindCountry:
			m.countries[e.Value] = e
		case KindCIDR:
			p, err := parseCIDR(e.Value)
			if err != nil {
				continue
			}
			if _, dup := m.nets[p]; !dup {
				fam := family(p.Addr())
				m.bits[fam] = append(m.bits[fam], p.Bits())
			}
			m.nets[p] = e
		}
	}
	return m
}

func family(a netip.Addr) int {
	if a.Is4() {
		return 4
	}
	return 6
}

// match returns the first entry matching the send: its number, a prefix of it, its country,
// or a network holding its client. ok is false when none matches.
func (m *matcher) match(t otp.FraudTarget) (ListEntry, bool) {
	if e, ok := m.numbers[t.Phone]; ok {
		return e, true
	}
	for n := len(t.Phone); n >= 2; n-- {
		if e, ok := m.prefixes[t.Phone[:n]]; ok {
			return e, true
		}
	}
	if e, ok := m.countries[t.Region]; ok {
		return e, true
	}
	if len(m.nets) == 0 {
		return ListEntry{}, false
	}
	client, ok := clientPrefix(t.ClientIP)
	if !ok {
		return ListEntry{}, false
	}
	for _, bits := range m.bits[family(client.Addr())] {
		if bits > client.Bits() {
			continue // the client is known only to its own prefix: a longer entry cannot hold it
		}
		if e, ok := m.nets[netip.PrefixFrom(client.Addr(), bits).Masked()]; ok {
			return e, true
		}
	}
	return ListEntry{}, false
}

// clientPrefix reads a client address as the limiter keys it: an address, or an IPv6
// network such as "2001:db8:1:2::/64".
func clientPrefix(ip string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(ip); err == nil {
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), true
}
