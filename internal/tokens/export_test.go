package tokens

import (
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// SignForTest signs claims with the key that signs now, for tests of the checks that
// follow the signature.
func (s *Service) SignForTest(tb testing.TB, claims map[string]any) string {
	tb.Helper()
	k, _ := s.ring.signing(s.Now())
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Alg), Key: jose.JSONWebKey{Key: k.Private, KeyID: k.ID}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
