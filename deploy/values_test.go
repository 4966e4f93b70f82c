package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestValuesAreDocumented: values.yaml is the chart's list of its values with their
// defaults, so every value has a comment, above itself or above a value that holds it.
func TestValuesAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if missing := undocumented(&doc, "", false); len(missing) > 0 {
		t.Errorf("values.yaml: no comment says what these are: %s", strings.Join(missing, ", "))
	}
}

// undocumented lists the values under n that no comment describes. A comment above a
// key describes its value and everything the value holds.
func undocumented(n *yaml.Node, path string, described bool) []string {
	switch {
	case n.Kind == yaml.DocumentNode && len(n.Content) == 1:
		return undocumented(n.Content[0], path, described)
	case n.Kind != yaml.MappingNode || len(n.Content) == 0:
		if described {
			return nil
		}
		return []string{path}
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		out = append(out, undocumented(v, strings.TrimPrefix(path+"."+k.Value, "."), described || k.HeadComment != "")...)
	}
	return out
}

func TestUndocumentedFindsBareValues(t *testing.T) {
	const values = "# The file's own comment.\n\n# -- Described.\na: 1\nb:\n  # -- Described.\n  c: 2\n  d: []\n# -- Described, with all it holds.\ne:\n  f: {}\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(values), &doc); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(undocumented(&doc, "", false), ","); got != "b.d" {
		t.Errorf("got %q, want b.d", got)
	}
}
