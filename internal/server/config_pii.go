package server

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"otpgate/internal/pii"
)

// PIISettings name the keys that seal phone numbers and email addresses at rest.
type PIISettings struct {
	// DataKeys is the key list (id:base64, the first sealing); unset derives one from
	// OTP_SECRET. DataKeysFile reads the same list from a file, for secret stores that
	// mount files.
	DataKeys     string `env:"OTP_DATA_KEYS"`
	DataKeysFile string `env:"OTP_DATA_KEYS_FILE"`

	// dataKeySpec is the list read from whichever of the two is set.
	dataKeySpec string
}

// checkPII reads the data key list and checks it, so that a bad key stops start-up
// naming the variable rather than the first write that needs it.
func (c *config) checkPII() error {
	spec := c.DataKeys
	if c.DataKeysFile != "" {
		if spec != "" {
			return errors.New("config: set one of OTP_DATA_KEYS and OTP_DATA_KEYS_FILE, not both")
		}
		b, err := os.ReadFile(c.DataKeysFile)
		if err != nil {
			return fmt.Errorf("config: OTP_DATA_KEYS_FILE: %w", err)
		}
		spec = strings.TrimSpace(string(b))
		if spec == "" {
			return fmt.Errorf("config: OTP_DATA_KEYS_FILE=%s: the file is empty", c.DataKeysFile)
		}
	}
	// Any secret tells whether the list parses; the real one is known once parts are built.
	if _, err := pii.New([]byte("key list check"), spec); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	c.dataKeySpec = spec
	return nil
}

// dataKeys builds the personal-data keys from the server's secret (which dev mode may
// have made up) and the configured key list.
func dataKeys(c config, secret []byte) (*pii.Keys, error) {
	k, err := pii.New(secret, c.dataKeySpec)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return k, nil
}
