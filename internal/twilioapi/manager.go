package twilioapi

import (
	"context"

	"otpgate/internal/otp"
)

// VerificationManager reads and closes verifications by id, which Twilio Verify offers
// and the native API does not; *otp.Service implements it.
type VerificationManager interface {
	// Verification returns one of the app's verifications, its status as of now (see
	// otp.Verification.StatusAt). Errors: otp.ErrNotFound, *otp.ErrInvalidRequest for an
	// id that is no UUID, and errors wrapping otp.ErrUnavailable.
	Verification(ctx context.Context, app *otp.App, id string) (otp.Verification, error)
	// Close ends one of the app's pending verifications as canceled or approved, as its
	// owner decided without a code. Errors: otp.ErrNotFound when there is no such pending
	// verification, *otp.ErrInvalidRequest, and errors wrapping otp.ErrUnavailable.
	Close(ctx context.Context, app *otp.App, id string, to otp.Status) (otp.Verification, error)
}

var _ VerificationManager = (*otp.Service)(nil)
