package main

// The Kubernetes project publishes its OpenAPI files without enums: hack/update-openapi-spec.sh
// runs the API server with OpenAPIEnums=false "until #109177 is resolved", a problem of the
// clients generated from those files. A running API server serves them (the feature is on by
// default), and they are what makes a misspelt protocol or pathType an error here as it is
// there. They come from the definitions that openapi-gen generated for the same release,
// pkg/generated/openapi/zz_generated.openapi.go in the same module: a Go file, read here as
// syntax (it cannot be compiled into this module without every Kubernetes staging module),
// taking each Enum and the path of properties, items and additionalProperties that leads to it.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// addEnums lays the enums of the generated definitions src onto the schemas of the same name
// in schemas and returns how many it laid. An enum whose place does not exist in the
// published schema is an error: the two files would not be of one release.
func addEnums(schemas map[string]any, src []byte) (int, error) {
	f, err := parser.ParseFile(token.NewFileSet(), generatedDefinition, src, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	names, err := definitionNames(f)
	if err != nil {
		return 0, err
	}
	laid := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || names[fn.Name.Name] == "" {
			continue
		}
		name := names[fn.Name.Name]
		s, ok := schemas[name]
		if !ok {
			continue // not reachable from the chart's kinds
		}
		var found []enum
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
				found = enums(r.Results[0], nil, found)
				return false
			}
			return true
		})
		for _, e := range found {
			if err := setEnum(s, e); err != nil {
				return laid, fmt.Errorf("%s: %w", name, err)
			}
			laid++
		}
	}
	return laid, nil
}

// definitionNames maps each schema_… function of GetOpenAPIDefinitions to the OpenAPI name
// of its type. The keys are `pkg.Type{}.OpenAPIModelName()`, whose value k8s.io/api
// generates from the package path as openapi-gen does (k8s.io/api/core/v1.Pod becomes
// io.k8s.api.core.v1.Pod); older releases wrote the Go name as a string.
func definitionNames(f *ast.File) (map[string]string, error) {
	imports := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		alias := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			alias = im.Name.Name
		}
		imports[alias] = path
	}
	names := map[string]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "GetOpenAPIDefinitions" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			call, ok := kv.Value.(*ast.CallExpr)
			if !ok {
				return true
			}
			callee, ok := call.Fun.(*ast.Ident)
			if !ok {
				return true
			}
			if goName := goTypeName(kv.Key, imports); goName != "" {
				names[callee.Name] = restFriendlyName(goName)
			}
			return false
		})
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no definitions in GetOpenAPIDefinitions", generatedDefinition)
	}
	return names, nil
}

// goTypeName returns the Go name (package path, a dot, the type) of a definition's key.
func goTypeName(key ast.Expr, imports map[string]string) string {
	switch k := key.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(k.Value)
		return s
	case *ast.CallExpr: // pkg.Type{}.OpenAPIModelName()
		sel, ok := k.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "OpenAPIModelName" {
			return ""
		}
		lit, ok := sel.X.(*ast.CompositeLit)
		if !ok {
			return ""
		}
		typ, ok := lit.Type.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		pkg, ok := typ.X.(*ast.Ident)
		if !ok || imports[pkg.Name] == "" {
			return ""
		}
		return imports[pkg.Name] + "." + typ.Sel.Name
	}
	return ""
}

// restFriendlyName is kube-openapi's util.ToRESTFriendlyName: the domain of the package
// path reversed, then every slash a dot.
func restFriendlyName(goName string) string {
	parts := strings.Split(goName, "/")
	if strings.Contains(parts[0], ".") {
		d := strings.Split(parts[0], ".")
		for i, j := 0, len(d)-1; i < j; i, j = i+1, j-1 {
			d[i], d[j] = d[j], d[i]
		}
		parts[0] = strings.Join(d, ".")
	}
	return strings.Join(parts, ".")
}

// enum is the values of one Enum and the JSON path to its schema within a definition.
type enum struct {
	path   []string
	values []any
}

// enums appends the enums within the spec.Schema literal e (path deep in its definition):
// only Schema, SchemaProps, Properties, Items and AdditionalProperties lead to a subschema.
func enums(e ast.Expr, path []string, found []enum) []enum {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return found
	}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		switch key.Name {
		case "Schema", "SchemaProps":
			found = enums(kv.Value, path, found)
		case "Items":
			found = enums(kv.Value, append(path[:len(path):len(path)], "items"), found)
		case "AdditionalProperties":
			found = enums(kv.Value, append(path[:len(path):len(path)], "additionalProperties"), found)
		case "Properties":
			props, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				continue
			}
			for _, p := range props.Elts {
				pkv, ok := p.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if name, ok := pkv.Key.(*ast.BasicLit); ok {
					n, _ := strconv.Unquote(name.Value)
					found = enums(pkv.Value, append(path[:len(path):len(path)], "properties", n), found)
				}
			}
		case "Enum":
			if values := stringLits(kv.Value); len(values) > 0 {
				found = append(found, enum{path: path, values: values})
			}
		}
	}
	return found
}

func stringLits(e ast.Expr) []any {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []any
	for _, v := range lit.Elts {
		b, ok := v.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return nil
		}
		s, _ := strconv.Unquote(b.Value)
		out = append(out, s)
	}
	return out
}

// setEnum sets e's values on the schema at e's path within s, which must be a string.
func setEnum(s any, e enum) error {
	for _, p := range e.path {
		m, ok := s.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no schema there", strings.Join(e.path, "/"))
		}
		s = m[p]
	}
	m, ok := s.(map[string]any)
	if !ok || m["type"] != "string" {
		return fmt.Errorf("%s: not a string schema in the published file", strings.Join(e.path, "/"))
	}
	m["enum"] = e.values
	return nil
}
