package postgres

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"otpgate/internal/pii"
)

// A row that holds a phone number or email address keeps three columns for it (migrations
// 00110): <col> the keyed index, <col>_sealed the address sealed under the current data
// key, and, for the tables counted by number prefix, <col>_prefix the prefix (prefixOf).
// Rows written before 00110 hold the plain address in <col> and nothing in <col>_sealed
// until the re-sealing job (reseal.go) converts them; reads take either.

// The reads take coalesce(nullif(<col>_sealed, ''), <col>): the sealed form, or the plain
// address of a row not yet converted; openAddress opens what they took.

// openAddress opens an address as a row keeps it: a sealed value, or a plain address as it is.
func (s *Store) openAddress(stored string) (string, error) {
	if !isSealed(stored) {
		return stored, nil
	}
	return s.keys.Open(stored)
}

// isSealed tells a sealed value ("<key id>.<base64url>") from a plain address, which holds
// "+" (a phone number) or "@" (an email address); neither is in base64url.
func isSealed(v string) bool {
	return pii.KeyID(v) != "" && !strings.ContainsAny(v, "+@")
}

// PrefixKeep is how many last digits of a phone number the stored prefix leaves out: the
// fraud guard's default prefix setting, so that a stored prefix names a block of ten
// thousand numbers, which no one person is. Prefix counts from the history (conversion,
// spend) with a finer setting count by this one.
const PrefixKeep = 4

// prefixOf is the stored prefix of address: a phone number without its last PrefixKeep
// digits; "" for an email address.
func prefixOf(address string) string {
	if !strings.HasPrefix(address, "+") || len(address) <= PrefixKeep {
		return ""
	}
	return address[:len(address)-PrefixKeep]
}

// stored is an address as a row keeps it.
type stored struct {
	index, sealed, prefix string
}

// store gives the stored forms of address.
func (s *Store) store(address string) stored {
	return stored{index: s.keys.Index(address), sealed: s.keys.Seal(address), prefix: prefixOf(address)}
}

// prefixSQL is the SQL of a number's prefix without its last drop digits (an SQL int
// expression), from the stored prefix col; a drop below PrefixKeep counts as PrefixKeep.
func prefixSQL(col, drop string) string {
	col = storedPrefixSQL(col)
	return "left(" + col + ", length(" + col + ") - " + extraDrop(drop) + ")"
}

// storedPrefixSQL is the prefix column col (such as "v.phone_prefix"), or, on a row written
// before 00110 that the re-sealing job has not converted yet (its phone column still holds
// the plain number), the prefix of that number: counts rolled up before the conversion
// reaches a row must not lose it.
func storedPrefixSQL(col string) string {
	phone := strings.TrimSuffix(col, "_prefix")
	return "(CASE WHEN " + col + " <> '' OR " + phone + " NOT LIKE '+%' THEN " + col +
		" ELSE left(" + phone + ", length(" + phone + ") - " + strconv.Itoa(PrefixKeep) + ") END)"
}

// prefixLongSQL is the condition that the prefix prefixSQL gives is at least three long,
// the shortest the prefix counts take.
func prefixLongSQL(col, drop string) string {
	return "length(" + storedPrefixSQL(col) + ") - " + extraDrop(drop) + " >= 3"
}

// extraDrop is how many more digits than the stored prefix's a drop leaves out.
func extraDrop(drop string) string {
	k := strconv.Itoa(PrefixKeep)
	return "(greatest(" + drop + ", " + k + ") - " + k + ")"
}

// openEventData opens the sealed "to" of an event payload, leaving the rest of its bytes
// as they are: receivers get the address, the outbox keeps it sealed.
func (s *Store) openEventData(data []byte) ([]byte, error) {
	var p struct {
		To string `json:"to"`
	}
	if !bytes.Contains(data, []byte(`"to"`)) || json.Unmarshal(data, &p) != nil || !isSealed(p.To) {
		return data, nil
	}
	plain, err := s.keys.Open(p.To)
	if err != nil {
		return nil, err
	}
	sealed, _ := json.Marshal(p.To)
	open, _ := json.Marshal(plain) // strings always marshal
	return bytes.Replace(data, sealed, open, 1), nil
}

// Audit targets that name a person's address ("phone:+1…", "email:a@b") keep it sealed;
// the others ("ip:…", "app:…") stay as they are.
var addressTargets = []string{"phone:", "email:"}

// sealTarget seals the address in an audit target.
func (s *Store) sealTarget(target string) string {
	for _, k := range addressTargets {
		if a, ok := strings.CutPrefix(target, k); ok && a != "" && !isSealed(a) {
			return k + s.keys.Seal(a)
		}
	}
	return target
}

// openTarget opens what sealTarget sealed.
func (s *Store) openTarget(target string) (string, error) {
	for _, k := range addressTargets {
		if a, ok := strings.CutPrefix(target, k); ok && isSealed(a) {
			plain, err := s.keys.Open(a)
			return k + plain, err
		}
	}
	return target, nil
}
