package seal_test

import (
	"bytes"
	"testing"

	"otpgate/internal/seal"
)

func TestBox(t *testing.T) {
	secret := []byte("a test secret of enough length")
	box, err := seal.New(secret, "label one")
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal("row-1", []byte("123456"))
	if bytes.Contains(sealed, []byte("123456")) {
		t.Errorf("sealed value holds the plain text")
	}
	t.Run("OpensForItsRow", func(t *testing.T) {
		if plain, ok := box.Open("row-1", sealed); !ok || string(plain) != "123456" {
			t.Errorf("got %q, %v; want 123456, true", plain, ok)
		}
	})
	t.Run("DoesNotOpenForAnotherRow", func(t *testing.T) {
		if _, ok := box.Open("row-2", sealed); ok {
			t.Errorf("opened for another row")
		}
	})
	t.Run("DoesNotOpenUnderAnotherLabel", func(t *testing.T) {
		other, err := seal.New(secret, "label two")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := other.Open("row-1", sealed); ok {
			t.Errorf("opened under another label")
		}
	})
	t.Run("ShortOrEmptyInputDoesNotOpen", func(t *testing.T) {
		for _, in := range [][]byte{nil, sealed[:5]} {
			if _, ok := box.Open("row-1", in); ok {
				t.Errorf("opened %x", in)
			}
		}
	})
	t.Run("EmptySecretIsRefused", func(t *testing.T) {
		if _, err := seal.New(nil, "label"); err == nil {
			t.Errorf("got no error for an empty secret")
		}
	})
}
