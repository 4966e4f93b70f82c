package layering

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage holds docs/architecture.md's table of packages to the
// module: every package of `go list ./...` is named in the first cell of exactly one row,
// and every path named there exists.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]int{}
	path := regexp.MustCompile("`([a-z0-9_/]+)`")
	for line := range strings.Lines(string(doc)) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(cells[1], -1) {
			p := strings.TrimSuffix(m[1], "/")
			named[p]++
			if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil {
				t.Errorf("docs/architecture.md names %s, which does not exist", p)
			}
		}
	}
	out, err := exec.Command("go", "list", "otpgate/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 50 {
		t.Fatalf("go list named %d packages; want the whole module", len(pkgs))
	}
	for _, pkg := range pkgs {
		switch p := strings.TrimPrefix(pkg, "otpgate/"); named[p] {
		case 1:
		case 0:
			t.Errorf("docs/architecture.md's table does not name %s", p)
		default:
			t.Errorf("docs/architecture.md's table names %s %d times, want once", p, named[p])
		}
	}
}
