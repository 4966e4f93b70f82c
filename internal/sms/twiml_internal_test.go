package sms

import (
	"testing"

	"otpgate/internal/contact"
)

// TestEveryLocaleHasAVoice: a call in a built-in locale reads in that language, never in
// the English fallback.
func TestEveryLocaleHasAVoice(t *testing.T) {
	for _, l := range contact.KnownLocales() {
		if _, ok := voices[l]; !ok {
			t.Errorf("%s: no voice", l)
		}
	}
	if len(voices) != len(contact.KnownLocales()) {
		t.Errorf("got %d voices, want one per locale (%d)", len(voices), len(contact.KnownLocales()))
	}
}
