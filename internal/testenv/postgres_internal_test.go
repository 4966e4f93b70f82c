package testenv

import "testing"

func TestAdminURL(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"PoolParametersAreDropped", "postgres://u@h:5432/db?pool_max_conns=16&sslmode=require", "postgres://u@h:5432/db?sslmode=require"},
		{"TLSIsOffUnlessAskedFor", "postgresql://u@h/db", "postgresql://u@h/db?sslmode=disable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := adminURL(c.in)
			if err != nil || got != c.want {
				t.Errorf("got %q, %v, want %q", got, err, c.want)
			}
		})
	}
	t.Run("OtherSchemesAreRefused", func(t *testing.T) {
		if got, err := adminURL("mysql://u@h/db"); err == nil {
			t.Errorf("got %q, want an error", got)
		}
	})
}
