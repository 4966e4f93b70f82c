package totp

import (
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// QRSize is the width and height of an enrolment QR code in pixels: large enough for a
// phone's camera across a desk, small enough for an API answer (a few kilobytes).
const QRSize = 256

// QRPNG draws uri (a factor's otpauth URI) as a QR code in PNG, with medium error
// correction, for the user to scan into an authenticator app. It holds the secret, so it
// is shown once, with the secret.
func QRPNG(uri string) ([]byte, error) {
	png, err := qrcode.Encode(uri, qrcode.Medium, QRSize)
	if err != nil {
		return nil, fmt.Errorf("totp: qr code: %w", err)
	}
	return png, nil
}
