package tokens

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The signing algorithms a key may have: ES256 (ECDSA P-256, which every JWT library
// verifies) and EdDSA (Ed25519).
const (
	AlgES256 = string(jose.ES256)
	AlgEdDSA = string(jose.EdDSA)
)

// algs are the algorithms a token may name; any other, none included, is refused before
// a key is looked at.
var algs = []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA}

// Key is one signing key with its private half.
type Key struct {
	ID      string
	Alg     string
	Private crypto.Signer
	// CreatedAt and ActiveAt are StoredKey's; both are zero for a key of OTP_TOKEN_KEYS.
	CreatedAt time.Time
	ActiveAt  time.Time
}

// NewKey generates a key of alg (AlgES256 or AlgEdDSA) with a random id.
func NewKey(alg string) (Key, error) {
	id := make([]byte, 8)
	_, _ = rand.Read(id) // crypto/rand does not fail on supported platforms
	k := Key{ID: hex.EncodeToString(id), Alg: alg}
	var err error
	switch alg {
	case AlgES256:
		k.Private, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case AlgEdDSA:
		_, k.Private, err = ed25519.GenerateKey(rand.Reader)
	default:
		err = fmt.Errorf("tokens: algorithm %q: want %s or %s", alg, AlgES256, AlgEdDSA)
	}
	return k, err
}

// keyFromPKCS8 reads a private key of a supported kind; its kind decides its algorithm.
func keyFromPKCS8(id string, der []byte) (Key, error) {
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return Key{}, errors.New("is not a PKCS #8 private key")
	}
	switch p := priv.(type) {
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return Key{}, errors.New("is an ECDSA key of another curve than P-256")
		}
		return Key{ID: id, Alg: AlgES256, Private: p}, nil
	case ed25519.PrivateKey:
		return Key{ID: id, Alg: AlgEdDSA, Private: p}, nil
	}
	return Key{}, errors.New("is neither an ECDSA P-256 nor an Ed25519 key")
}

// keyID is what a key's id may be: it appears in every token's header and in the JWKS.
var keyID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ParseKeys reads OTP_TOKEN_KEYS: comma-separated id:key pairs, each key a PKCS #8
// private key (ECDSA P-256 or Ed25519) in base64 DER. The first signs; the others are
// published only, so that tokens they signed verify until they expire.
func ParseKeys(s string) ([]Key, error) {
	var out []Key
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		id, b64, ok := strings.Cut(part, ":")
		if !ok || !keyID.MatchString(id) {
			return nil, fmt.Errorf("%q: want id:base64-key with an id of 1 to 64 letters, digits, '.', '_' or '-'", short(part))
		}
		if seen[id] {
			return nil, fmt.Errorf("key id %q is given twice", id)
		}
		seen[id] = true
		der, err := decodeBase64(b64)
		if err != nil {
			return nil, fmt.Errorf("key %q is not base64", id)
		}
		k, err := keyFromPKCS8(id, der)
		if err != nil {
			return nil, fmt.Errorf("key %q %s", id, err)
		}
		out = append(out, k)
	}
	return out, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// short keeps a secret out of an error message: only its first characters show.
func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// public is the key's JWK as the JWKS publishes it.
func (k Key) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: k.Alg, Use: "sig"}
}
