package templates

import (
	"strings"
	"testing"
)

// Templates are tried with an app name of SampleNameLen when they are set: a longer
// friendly name could make a message longer than its template was checked for.
func TestFriendlyNamesFitWhatTemplatesAreTriedWith(t *testing.T) {
	if maxFriendlyNameLen > SampleNameLen || len([]rune(sampleTemplateData.App)) < maxFriendlyNameLen {
		t.Errorf("friendly names reach %d characters, templates are tried with %d", maxFriendlyNameLen, len([]rune(sampleTemplateData.App)))
	}
	for _, name := range []string{strings.Repeat("界", maxFriendlyNameLen), " Acme Bank - Login_2 ", "Ünïcödé & Co.", "",
		"Booking.com", "Shop 24/7", "Acme 2024", "Route 66 Motel", "Café ❤️", "C++ Guild", "12345 Bakery"} {
		if problem := FriendlyNameProblem(name); problem != "" {
			t.Errorf("%q: got %q, want it taken", name, problem)
		}
	}
}
