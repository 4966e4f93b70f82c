package testenv

import "otpgate/internal/pii"

// DataSecret is the OTP_SECRET the tests' personal-data keys derive from.
const DataSecret = "otpgate tests: the secret the personal-data keys derive from"

// DataKeys are personal-data keys for a store under test, derived from DataSecret, so that
// every test (and a test that reopens a database) seals and indexes alike.
func DataKeys() *pii.Keys {
	k, err := pii.New([]byte(DataSecret), "")
	if err != nil {
		panic(err) // a fixed, non-empty secret and no key list always make keys
	}
	return k
}
