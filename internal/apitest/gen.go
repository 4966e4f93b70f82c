package apitest

import (
	"math"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"
)

// Hints override the values generated for object properties and parameters, by name:
// the document cannot tell which phone numbers exist or which code was sent.
type Hints map[string]*rapid.Generator[any]

// draw generates a JSON value (as encoding/json decodes them) for s: mostly values s
// accepts, from its examples, enums, patterns and bounds, and now and then near misses,
// such as an optional property left out or a string of any runes. Whether the document
// accepts a generated request is for Doc.Check to say, not for the generator.
func draw(t *rapid.T, s *openapi3.Schema, hints Hints, label string) any {
	if s == nil {
		return nil
	}
	if len(s.Enum) > 0 {
		return rapid.SampledFrom(s.Enum).Draw(t, label)
	}
	if ex := examplesOf(s); len(ex) > 0 && rapid.Bool().Draw(t, label+" from examples") {
		return rapid.SampledFrom(ex).Draw(t, label)
	}
	if alts := append(append(openapi3.SchemaRefs(nil), s.AnyOf...), s.OneOf...); len(alts) > 0 && s.Type == nil && len(s.Properties) == 0 {
		// A schema of alternatives (a body several kinds of caller post) is one of them.
		alt := rapid.SampledFrom(alts).Draw(t, label+" alternative")
		return draw(t, alt.Value, hints, label)
	}
	switch {
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		return drawObject(t, s, hints, label)
	case s.Type.Is(openapi3.TypeString):
		return drawString(t, s, label)
	case s.Type.Is(openapi3.TypeInteger):
		lo, hi := bound(s.Min, -1_000_000), bound(s.Max, 1_000_000)
		return float64(rapid.Int64Range(int64(lo), int64(hi)).Draw(t, label))
	case s.Type.Is(openapi3.TypeNumber):
		return rapid.Float64Range(bound(s.Min, -1e6), bound(s.Max, 1e6)).Draw(t, label)
	case s.Type.Is(openapi3.TypeBoolean):
		return rapid.Bool().Draw(t, label)
	case s.Type.Is(openapi3.TypeArray):
		var items *openapi3.Schema
		if s.Items != nil {
			items = s.Items.Value
		}
		n := rapid.IntRange(int(s.MinItems), int(s.MinItems)+3).Draw(t, label+" length")
		out := make([]any, n)
		for i := range out {
			out[i] = draw(t, items, hints, label+"["+strconv.Itoa(i)+"]")
		}
		return out
	}
	return drawString(t, s, label)
}

// drawObject includes every required property and each optional one by chance.
func drawObject(t *rapid.T, s *openapi3.Schema, hints Hints, label string) map[string]any {
	required := map[string]bool{}
	for _, name := range s.Required {
		required[name] = true
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names) // map order would make examples irreproducible
	out := map[string]any{}
	for _, name := range names {
		if !required[name] && !rapid.Bool().Draw(t, label+"."+name+" present") {
			continue
		}
		if h, ok := hints[name]; ok {
			out[name] = h.Draw(t, label+"."+name)
			continue
		}
		out[name] = draw(t, s.Properties[name].Value, hints, label+"."+name)
	}
	return out
}

// drawString draws from the pattern when there is one, else any runes within the bounds.
func drawString(t *rapid.T, s *openapi3.Schema, label string) string {
	if s.Pattern != "" && rapid.IntRange(0, 3).Draw(t, label+" patterned") > 0 {
		return rapid.StringMatching(s.Pattern).Draw(t, label)
	}
	lo, hi := int(s.MinLength), 40
	if s.MaxLength != nil && int(*s.MaxLength) < hi {
		hi = int(*s.MaxLength)
	}
	return rapid.StringN(lo, max(lo, hi), -1).Draw(t, label)
}

// examplesOf lists the schema's JSON Schema examples (and its OpenAPI example).
func examplesOf(s *openapi3.Schema) []any {
	out := append([]any(nil), s.Examples...)
	if s.Example != nil {
		out = append(out, s.Example)
	}
	return out
}

// bound is *p, or def when the schema sets no bound.
func bound(p *float64, def float64) float64 {
	if p == nil || math.IsInf(*p, 0) {
		return def
	}
	return *p
}
