package recent_test

import (
	"testing"

	"otpgate/internal/recent"
)

func TestMap(t *testing.T) {
	m := recent.New[string, int](2)
	m.Put("a", 1)
	m.Put("b", 2)
	t.Run("AFullGenerationStartsANewOneAndKeepsTheOld", func(t *testing.T) {
		m.Put("c", 3) // a and b move to the older generation
		for k, want := range map[string]int{"a": 1, "b": 2, "c": 3} {
			if got, ok := m.Get(k); !ok || got != want {
				t.Errorf("Get(%q) = %d, %v; want %d, true", k, got, ok, want)
			}
		}
	})
	t.Run("WhatIsNotUsedIsDropped", func(t *testing.T) {
		m := recent.New[string, int](1)
		m.Put("old", 1)
		m.Put("new", 2) // old moves to the older generation
		m.Put("newer", 3)
		if _, ok := m.Get("old"); ok {
			t.Errorf("got old after two newer generations, want it dropped")
		}
	})
	t.Run("DropForgetsBothGenerations", func(t *testing.T) {
		m := recent.New[string, int](1)
		m.Put("x", 1)
		m.Put("y", 2)
		m.Drop("x")
		if _, ok := m.Get("x"); ok {
			t.Errorf("got x after Drop, want nothing")
		}
	})
	t.Run("AnUpdateReplacesTheOlderValue", func(t *testing.T) {
		m := recent.New[string, int](1)
		m.Put("k", 1)
		m.Put("z", 0) // k moves to the older generation
		m.Put("k", 2)
		m.Put("w", 0)
		if got, ok := m.Get("k"); !ok || got != 2 {
			t.Errorf("Get(k) = %d, %v; want 2, true", got, ok)
		}
	})
}
