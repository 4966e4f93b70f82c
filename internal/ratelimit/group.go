package ratelimit

import "slices"

// together puts every key in one call: a single Redis (or a Sentinel's master) holds them all.
func together(keys []string) [][]int {
	g := make([]int, len(keys))
	for i := range g {
		g[i] = i
	}
	return [][]int{g}
}

// apart gives every key its own call, for clients that shard by key.
func apart(keys []string) [][]int {
	out := make([][]int, len(keys))
	for i := range keys {
		out[i] = []int{i}
	}
	return out
}

// bySlot groups keys by Redis Cluster hash slot, in ascending slot order and policy order
// within a slot, so that concurrent decisions visit shared slots in the same order.
func bySlot(keys []string) [][]int {
	idx := together(keys)[0]
	slotOf := make([]int, len(keys))
	for i, k := range keys {
		slotOf[i] = slot(k)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return slotOf[a] - slotOf[b] })
	var out [][]int
	for i, k := range idx {
		if i > 0 && slotOf[k] == slotOf[idx[i-1]] {
			out[len(out)-1] = append(out[len(out)-1], k)
			continue
		}
		out = append(out, []int{k})
	}
	return out
}
