package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserDocSnippets holds the backend snippets of docs/browser.md equal to the code
// TestTokenLibraries runs.
func TestBrowserDocSnippets(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := read("docs/browser.md")
	_, goSnippet, _ := strings.Cut(read("test/conformance/tokens_backend_test.go"), "// snippet: go\n\n")
	goSnippet, _, found := strings.Cut(goSnippet, "\n// end snippet")
	if !found {
		t.Fatal("tokens_backend_test.go lost its snippet markers")
	}
	for lang, code := range map[string]string{
		"go": goSnippet, "js": read("test/tokens/backend.mjs"), "python": read("test/tokens/backend.py"),
	} {
		block := "```" + lang + "\n" + strings.TrimRight(code, "\n") + "\n```"
		if !strings.Contains(doc, block) {
			t.Errorf("docs/browser.md has no %s block equal to the code the library test runs; copy it in:\n%s", lang, block)
		}
	}
}
