package httpkit

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// plainReq is a request type with string fields and one that is not.
type plainReq struct {
	Phone  string `json:"phone"`
	Code   string `json:"code"`
	Locale string `json:"locale,omitempty"`
	N      int    `json:"n"`
}

// strictDecode is decode without the plain path.
func strictDecode(body []byte) (plainReq, error) {
	d := NewDecoder[plainReq]()
	d.plain = nil
	return d.Decode(body)
}

// TestPlainDecodeAgreesWithStrict generates bodies near the plain form (other names, cases,
// duplicates, escapes, non-ASCII, other value types, odd whitespace and trailing data):
// whatever the plain path accepts, the strict path accepts with the same value.
func TestPlainDecodeAgreesWithStrict(t *testing.T) {
	fields := plainFields(reflect.TypeFor[plainReq]())
	// Each draw is mostly from the plain pool, so that many bodies are plain but for one
	// thing, and many are plain throughout (with duplicates among them).
	names := pools{[]string{"phone", "code", "locale"}, []string{"n", "Phone", "PHONE", "cOde", "x", "", "ph\\u006fne", "phoné"}}
	values := pools{[]string{`"+819012345678"`, `"123456"`, `""`, `"en-US"`}, []string{`"a\"b"`, `"a\\b"`, `"é"`, `"\u0041"`, `1`, `null`, `true`, `{}`, `[]`, "\"tab\there\""}}
	spaces := pools{[]string{"", " ", "\n", "\t", "\r\n"}, []string{"\v", "\u00a0", "\f"}}
	accepted := 0
	rapid.Check(t, func(rt *rapid.T) {
		sp := func(label string) string { return spaces.draw(rt, label) }
		var b strings.Builder
		b.WriteString(sp("lead") + "{")
		for i := range rapid.IntRange(0, 4).Draw(rt, "members") {
			if i > 0 {
				b.WriteString(sp("before comma") + "," + sp("after comma"))
			}
			b.WriteString(sp("before key") + `"` + names.draw(rt, "name") + `"` + sp("before colon") + ":" +
				sp("after colon") + values.draw(rt, "value"))
		}
		b.WriteString(sp("before brace") + "}" + sp("trail") + rapid.SampledFrom([]string{"", "", "x", "{}", ","}).Draw(rt, "after"))
		body := []byte(b.String())

		var got plainReq
		if !plainDecode(body, fields, reflect.ValueOf(&got).Elem()) {
			if got != (plainReq{}) {
				rt.Fatalf("%q: declined but wrote %+v", body, got)
			}
			return
		}
		accepted++
		want, err := strictDecode(body)
		if err != nil || got != want {
			rt.Fatalf("%q: plain path got %+v, strict path %+v (%v)", body, got, want, err)
		}
	})
	if accepted == 0 {
		t.Error("the plain path accepted no generated body; the property tested nothing")
	}
}

// pools are the usual choices and the odd ones; draw takes an odd one one time in eight.
type pools [2][]string

func (p pools) draw(rt *rapid.T, label string) string {
	if rapid.IntRange(0, 7).Draw(rt, label+" odd") == 0 {
		return rapid.SampledFrom(p[1]).Draw(rt, label)
	}
	return rapid.SampledFrom(p[0]).Draw(rt, label)
}

func TestPlainDecode(t *testing.T) {
	fields := plainFields(reflect.TypeFor[plainReq]())
	for _, c := range []struct {
		body string
		ok   bool
		want plainReq
	}{
		{`{"phone":"+819012345678"}`, true, plainReq{Phone: "+819012345678"}},
		{` { "phone" : "1" , "code" : "2" } `, true, plainReq{Phone: "1", Code: "2"}},
		{`{}`, true, plainReq{}},
		{`{"phone":"1","Phone":"2"}`, false, plainReq{}},
		{`{"phone":"1","phone":"1"}`, false, plainReq{}},
		{`{"Phone":"1"}`, false, plainReq{}},
		{`{"n":"1"}`, false, plainReq{}},
		{`{"phone":"a\nb"}`, false, plainReq{}},
		{`{"phone":"1"}x`, false, plainReq{}},
		{`{"phone":"1",}`, false, plainReq{}},
		{`{"phone":"1"`, false, plainReq{}},
		{`[]`, false, plainReq{}},
		{``, false, plainReq{}},
	} {
		var got plainReq
		ok := plainDecode([]byte(c.body), fields, reflect.ValueOf(&got).Elem())
		if ok != c.ok || got != c.want {
			t.Errorf("%q: got %v %+v, want %v %+v", c.body, ok, got, c.ok, c.want)
		}
	}
}
