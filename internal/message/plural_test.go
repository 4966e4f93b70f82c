package message

import "testing"

// TestEveryLocaleHasAFormForEveryCategory: each count a message says (1–59) finds its
// own form, never a neighbour's by clamping.
func TestEveryLocaleHasAFormForEveryCategory(t *testing.T) {
	for tag, l := range builtin {
		if l.plural == nil {
			t.Errorf("%s: no plural rule", tag)
			continue
		}
		for n := 1; n < 60; n++ {
			if c := l.plural(n); c >= len(l.minute) || c >= len(l.second) {
				t.Errorf("%s: %d is plural category %d, but there are %d minute and %d second forms", tag, n, c, len(l.minute), len(l.second))
				break
			}
		}
	}
}
