package text

import "testing"

func TestFind(t *testing.T) {
	type inner struct {
		Note string
		Raw  []byte
	}
	type outer struct {
		Name string
		Map  map[string]inner
	}
	for _, tc := range []struct {
		name          string
		v             any
		path, problem string
	}{
		{"Clean", outer{Name: "é", Map: map[string]inner{"k": {Note: "日本", Raw: []byte{0, 0xff}}}}, "", ""},
		{"NULInField", outer{Name: "a\x00"}, "v.Name", ProblemNUL},
		{"InvalidUTF8InMapValue", outer{Map: map[string]inner{"k": {Note: "\xff"}}}, "v.Map[k].Note", ProblemUTF8},
		{"NULInMapKey", outer{Map: map[string]inner{"k\x00": {}}}, "v.Map key", ProblemNUL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, problem := Find("v", tc.v)
			if problem != tc.problem || (problem != "" && path != tc.path) {
				t.Errorf("got %q, %q; want %q, %q", path, problem, tc.path, tc.problem)
			}
		})
	}
}
