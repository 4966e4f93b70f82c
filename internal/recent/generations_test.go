package recent

import "testing"

func TestGenerations(t *testing.T) {
	const size = 64
	t.Run("KeepsAtMostTwoGenerations", func(t *testing.T) {
		m := New[int, int](size)
		for i := range 3*size + 7 {
			m.Put(i, i)
		}
		if n := len(m.cur) + len(m.old); n > 2*size {
			t.Errorf("got %d entries, want at most %d", n, 2*size)
		}
	})
	t.Run("AHitInTheOlderGenerationMovesUp", func(t *testing.T) {
		m := New[int, int](size)
		m.Put(-1, 0)
		for i := range size {
			m.Put(i, i)
		}
		if _, ok := m.old[-1]; !ok {
			t.Fatal("want the first entry in the older generation after a full one")
		}
		m.Get(-1)
		if _, ok := m.cur[-1]; !ok {
			t.Errorf("got it not in the newer generation after a hit, want it moved up")
		}
	})
}
