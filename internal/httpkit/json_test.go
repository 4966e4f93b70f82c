package httpkit

import "testing"

func TestIsJSONMediaType(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON; charset=UTF-8", true},
		{"application/json; charset=latin1", false},
		{"application/json; boundary=x", false},
		{"text/plain", false},
		{"application/x-www-form-urlencoded", false},
		{"application/problem+json", false},
		{"", false},
		{"application/json;", true},
		{"application/json; charset", false},
	}
	for _, tt := range tests {
		t.Run(tt.ct, func(t *testing.T) {
			if got := isJSONMediaType(tt.ct); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
