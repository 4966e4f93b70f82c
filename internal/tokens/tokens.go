// Package tokens signs the verification token an approved check answers (a compact JWT,
// ES256 or EdDSA), publishes the public keys as a JWKS, rotates the signing keys (from
// OTP_TOKEN_KEYS, or generated and stored sealed), and redeems a token's jti once for the
// app's backend. It owns its Store and the contract test of it (tokenstest); where it is
// stored and served is others' business.
package tokens

import (
	"otpgate/internal/otp"
)

// Errors of Redeem; they carry the codes the APIs answer with.
var (
	// ErrInvalid refuses a token that is malformed, signed with an algorithm or a key
	// this service does not publish, tampered with, or issued by another service or for
	// another app.
	ErrInvalid = otp.Errorf(otp.CodeInvalidToken, "the token is not a verification token this service signed for this app")
	// ErrExpired refuses a token whose time ran out.
	ErrExpired = otp.Errorf(otp.CodeTokenExpired, "the verification token expired")
	// ErrRedeemed refuses a token redeemed before.
	ErrRedeemed = otp.Errorf(otp.CodeTokenRedeemed, "the verification token was redeemed before")
)

// Claims are what a verification token says, beside the registered claims (iss, aud,
// iat, exp, jti).
type Claims struct {
	// App is the app's id, also the token's audience.
	App string `json:"app"`
	// Address is the verified phone number (E.164) or email address, for apps whose
	// token_address is "address"; AddressIndex its keyed index for "index".
	Address      string `json:"address,omitempty"`
	AddressIndex string `json:"address_index,omitempty"`
	Channel      string `json:"channel"`
	// Verification is the id of the approved verification.
	Verification string `json:"verification_id"`
}
