package contact

import "testing"

func TestCanonOrigin(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://Shop.Example.com", "https://shop.example.com"},
		{"https://shop.example.com:443/", "https://shop.example.com"},
		{"https://shop.example.com:8443", "https://shop.example.com:8443"},
		{" http://localhost:3000 ", "http://localhost:3000"},
		{"http://127.0.0.1:80", "http://127.0.0.1"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"http://shop.example.com", ""},
		{"https://shop.example.com/path", ""},
		{"https://user@shop.example.com", ""},
		{"https://shop.example.com?x=1", ""},
		{"shop.example.com", ""},
		{"*", ""},
		{"ftp://shop.example.com", ""},
	} {
		got, err := CanonOrigin(c.in)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("CanonOrigin(%q): got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
