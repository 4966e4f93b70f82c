package httpkit

import (
	"fmt"
	"testing"
)

// TestFlatAndNestedDecodeAlike decodes the same bodies into a flat struct, which takes the
// json.Unmarshal path, and into the same struct with a nested field, which takes the
// json.Decoder path: the answers must not tell them apart.
func TestFlatAndNestedDecodeAlike(t *testing.T) {
	type flat struct {
		Phone string `json:"phone"`
		N     int    `json:"n"`
	}
	type nested struct {
		Phone string   `json:"phone"`
		N     int      `json:"n"`
		X     struct{} `json:"x"`
	}
	f, n := NewDecoder[flat](), NewDecoder[nested]()
	if !f.flat || n.flat {
		t.Fatalf("got flat %v and %v, want true and false", f.flat, n.flat)
	}
	for _, body := range []string{
		`{"phone":"+819012345678","n":3}`, `{"phone":3}`, `{"n":"3"}`, `{"n":1.5}`, `{"phone":"a","n":99999999999999999999}`,
	} {
		a, errA := f.Decode([]byte(body))
		b, errB := n.Decode([]byte(body))
		if fmt.Sprint(errA) != fmt.Sprint(errB) || a.Phone != b.Phone || a.N != b.N {
			t.Errorf("%s: got %+v %v (flat) and %+v %v (nested), want the same", body, a, errA, b, errB)
		}
	}
}
