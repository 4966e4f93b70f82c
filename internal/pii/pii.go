// Package pii keeps people's phone numbers and email addresses unreadable at rest: each is
// sealed with AES-256-GCM under a named data key (OTP_DATA_KEYS, or one derived from
// OTP_SECRET) and found again through a keyed hash (HMAC-SHA-256) that stands in for it in
// indexes and Redis key names. Rotating the data key re-seals; the index key stays.
package pii

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Labels separate these derived keys from every other use of OTP_SECRET.
const (
	derivedKeyLabel = "otpgate pii data key"
	indexKeyLabel   = "otpgate pii index key"
	// DerivedKeyID names the data key derived from OTP_SECRET when OTP_DATA_KEYS is unset.
	DerivedKeyID = "s0"
	// IndexPrefix starts every index value, so that one is never mistaken for an address.
	IndexPrefix = "h1."
)

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,16}$`)

// Keys seals, opens and indexes addresses. The zero value is not usable; build one with New.
type Keys struct {
	current string
	aeads   map[string]cipher.AEAD
	order   []string
	index   []byte
}

// New builds the keys from secret (OTP_SECRET, which the index key is derived from) and
// spec (OTP_DATA_KEYS): comma-separated id:base64 pairs of 32-byte keys, the first sealing
// and every one opening. An empty spec uses one key derived from secret, with id "s0", so
// that addresses are sealed even when no data key is configured.
func New(secret []byte, spec string) (*Keys, error) {
	if len(secret) == 0 {
		return nil, errors.New("pii: empty secret")
	}
	k := &Keys{aeads: map[string]cipher.AEAD{}, index: derive(secret, indexKeyLabel)}
	if strings.TrimSpace(spec) == "" {
		if err := k.add(DerivedKeyID, derive(secret, derivedKeyLabel)); err != nil {
			return nil, err
		}
		return k, nil
	}
	for i, part := range strings.Split(spec, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || !keyIDPattern.MatchString(id) {
			return nil, fmt.Errorf("OTP_DATA_KEYS: entry %d: want id:base64-key with an id of 1-16 letters, digits, - or _", i+1)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			key, err = base64.RawURLEncoding.DecodeString(b64)
		}
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("OTP_DATA_KEYS: key %q: want 32 bytes in base64 (e.g. `openssl rand -base64 32`)", id)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("OTP_DATA_KEYS: key id %q given twice", id)
		}
		if err := k.add(id, key); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *Keys) add(id string, key []byte) error {
	block, err := aes.NewCipher(key)
	if err != nil {
		return fmt.Errorf("pii: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return fmt.Errorf("pii: %w", err)
	}
	if k.current == "" {
		k.current = id
	}
	k.aeads[id] = aead
	k.order = append(k.order, id)
	return nil
}

func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// Current is the id of the key that seals.
func (k *Keys) Current() string { return k.current }

// Index returns the keyed hash that stands in for address in indexes and key names: the same
// address always gives the same value, which says nothing of the address without the key.
func (k *Keys) Index(address string) string {
	if address == "" {
		return ""
	}
	m := hmac.New(sha256.New, k.index)
	m.Write([]byte(address))
	return IndexPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// Seal encrypts address under the current key: "<key id>.<base64url of nonce and
// ciphertext>". An empty address seals to "".
func (k *Keys) Seal(address string) string {
	if address == "" {
		return ""
	}
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(address)+aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand does not fail on supported platforms
	out := aead.Seal(nonce, nonce, []byte(address), []byte(k.current))
	return k.current + "." + base64.RawURLEncoding.EncodeToString(out)
}

// ErrUnknownKey is returned by Open for a value sealed under a key that is not configured.
var ErrUnknownKey = errors.New("pii: sealed under a data key that is not configured")

// ErrCorrupt is returned by Open for a value that is not one Seal made.
var ErrCorrupt = errors.New("pii: sealed value does not open")

// Open decrypts what Seal made under any configured key.
func (k *Keys) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	id, b64, ok := strings.Cut(sealed, ".")
	if !ok {
		return "", ErrCorrupt
	}
	aead, ok := k.aeads[id]
	if !ok {
		return "", fmt.Errorf("%w (key id %q)", ErrUnknownKey, id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	n := aead.NonceSize()
	if err != nil || len(raw) < n+aead.Overhead() {
		return "", ErrCorrupt
	}
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(id))
	if err != nil {
		return "", ErrCorrupt
	}
	return string(plain), nil
}

// KeyID returns the id of the key sealed is sealed under, or "" when it is not a sealed value.
func KeyID(sealed string) string {
	id, _, ok := strings.Cut(sealed, ".")
	if !ok || !keyIDPattern.MatchString(id) {
		return ""
	}
	return id
}

// Stale reports whether sealed was sealed under another key than the current one, so that
// rotation re-seals it.
func (k *Keys) Stale(sealed string) bool {
	return sealed != "" && KeyID(sealed) != k.current
}

// Mask shows enough of an address to tell it apart on screen and no more: a phone number's
// first four and last two digits, an email address's first letter and its domain.
func Mask(address string) string {
	if local, domain, ok := strings.Cut(address, "@"); ok {
		if local == "" {
			return "***@" + domain
		}
		r := []rune(local)
		return string(r[0]) + "***@" + domain
	}
	r := []rune(address)
	if len(r) <= 6 {
		return strings.Repeat("*", len(r))
	}
	return string(r[:4]) + strings.Repeat("*", len(r)-6) + string(r[len(r)-2:])
}
