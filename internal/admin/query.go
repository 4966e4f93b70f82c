package admin

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// apiQuery is, for each operation of the admin API's document, the query parameters it
// takes, keyed "GET /admin/api/sends".
type apiQuery map[string]map[string]bool

// docParam is a parameter of the document, or a reference to one of its components.
type docParam struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

// readAPIQuery reads the query parameters of every operation of an OpenAPI document (in
// JSON), with those of its path and the components it refers to.
func readAPIQuery(doc []byte) (apiQuery, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]docParam `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the document: %w", err)
	}
	resolve := func(ps []docParam) ([]docParam, error) {
		out := make([]docParam, 0, len(ps))
		for _, p := range ps {
			if p.Ref != "" {
				name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
				c, found := d.Components.Parameters[name]
				if !ok || !found {
					return nil, fmt.Errorf("parameter %s: no such component", p.Ref)
				}
				p = c
			}
			out = append(out, p)
		}
		return out, nil
	}
	q := apiQuery{}
	for path, item := range d.Paths {
		var shared []docParam
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for method, raw := range item {
			switch method {
			case "get", "post", "put", "patch", "delete":
			default:
				continue
			}
			var op struct {
				Parameters []docParam `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			ps, err := resolve(append(slices.Clone(shared), op.Parameters...))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			names := map[string]bool{}
			for _, p := range ps {
				if p.In == "query" {
					names[p.Name] = true
				}
			}
			q[strings.ToUpper(method)+" "+path] = names
		}
	}
	return q, nil
}

// onlyKnownQuery refuses a request that names a query parameter its operation does not
// take (400, naming each), so that a misspelt or misplaced filter, such as since= on the
// list of sends, is not silently ignored and the whole list answered instead.
func onlyKnownQuery(log *slog.Logger, names map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problems := map[string]string{}
		for name := range r.URL.Query() {
			if !names[name] {
				problems[name] = "is not a query parameter of this operation" + known(names)
			}
		}
		if len(problems) > 0 {
			writeAdminProblem(w, r, log, invalidParams(problems))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// known lists names for a problem's text: "; it takes app, phone and ip", or "; it takes none".
func known(names map[string]bool) string {
	if len(names) == 0 {
		return "; it takes none"
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	if len(list) == 1 {
		return "; it takes " + list[0]
	}
	return "; it takes " + strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}
