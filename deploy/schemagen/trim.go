package main

import (
	"fmt"
	"strings"
)

// keepReachable copies into kept the schemas named in names and every schema they refer to.
func keepReachable(schemas map[string]any, names []string, kept map[string]any) error {
	for _, name := range names {
		if _, ok := kept[name]; ok {
			continue
		}
		s, ok := schemas[name]
		if !ok {
			return fmt.Errorf("no schema %s", name)
		}
		kept[name] = s
		if err := keepReachable(schemas, refs(s, nil), kept); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// refs appends the names of the schemas that v refers to.
func refs(v any, names []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				names = append(names, strings.TrimPrefix(s, schemaRefPrefix))
			} else {
				names = refs(x, names)
			}
		}
	case []any:
		for _, x := range v {
			names = refs(x, names)
		}
	}
	return names
}

// dropDescriptions removes the descriptions of schema s and of its subschemas; the
// tests do not show them, and they are most of the file.
func dropDescriptions(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	delete(m, "description")
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			dropDescriptions(p)
		}
	}
	dropDescriptions(m["items"])
	dropDescriptions(m["additionalProperties"])
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := m[k].([]any); ok {
			for _, x := range list {
				dropDescriptions(x)
			}
		}
	}
}
