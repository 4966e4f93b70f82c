package tokens

import (
	"context"
	"time"
)

// StoredKey is a generated signing key as the store keeps it: the private key sealed
// (PKCS #8, by a Sealer for its id), never in plain.
type StoredKey struct {
	ID  string
	Alg string
	// Sealed is the PKCS #8 private key, sealed for ID.
	Sealed []byte
	// CreatedAt is when it was made and published; ActiveAt is when it starts signing,
	// later than CreatedAt for every key but the first, so that every instance and every
	// cached key set holds it before a token signed with it is seen.
	CreatedAt time.Time
	ActiveAt  time.Time
}

// Redemption is one redeemed token.
type Redemption struct {
	JTI   string
	AppID string
	// ExpiresAt is the token's expiry: the record may go once it has passed, since an
	// expired token is refused before its record is looked at.
	ExpiresAt  time.Time
	RedeemedAt time.Time
}

// Store keeps generated signing keys and redeemed token ids. Implementations:
// internal/postgres and internal/inmem; tokenstest holds the behaviour both share.
// Errors: anything wrapping otp.ErrUnavailable when the store cannot answer.
type Store interface {
	// SigningKeys lists the stored signing keys, the oldest first.
	SigningKeys(ctx context.Context) ([]StoredKey, error)
	// AddSigningKey stores k unless a key created after staleBefore is stored already (an
	// instance rotated first); added tells which. Concurrent calls add one key at most.
	AddSigningKey(ctx context.Context, k StoredKey, staleBefore time.Time) (added bool, err error)
	// DeleteSigningKeys deletes the keys of the ids; unknown ids are skipped.
	DeleteSigningKeys(ctx context.Context, ids []string) error
	// Redeem records the redemption of r.JTI, and may forget redemptions of tokens that
	// expired before r.RedeemedAt. Errors: ErrRedeemed when r.JTI was redeemed before.
	Redeem(ctx context.Context, r Redemption) error
}
