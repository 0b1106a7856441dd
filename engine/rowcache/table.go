package rowcache

import "math/bits"

// table maps row ids (>= 0) to values with open addressing and linear
// probing, sized once for the most entries it will hold (at most half
// full). It replaces Go maps on the cache's per-row paths: one multiply
// and, mostly, one probe in a flat array per lookup, no hashing of the key
// through the runtime, no growth and no allocation after New.
type table[V any] struct {
	ids   []int64 // -1: empty
	vals  []V
	shift uint // 64 - log2(len(ids))
	n     int
}

// newTable returns a table for up to n entries.
func newTable[V any](n int64) *table[V] {
	size := max(8, 1<<bits.Len64(uint64(max(n, 1))*2-1)) // a power of two >= 2n
	t := &table[V]{ids: make([]int64, size), vals: make([]V, size), shift: uint(64 - bits.TrailingZeros64(uint64(size)))}
	for i := range t.ids {
		t.ids[i] = -1
	}
	return t
}

// home is id's first probe (Fibonacci hashing: row ids are dense, and
// neighbouring ids must not share a run).
func (t *table[V]) home(id int64) int { return int((uint64(id) * 0x9e3779b97f4a7c15) >> t.shift) }

// get returns id's value (none for a negative id).
func (t *table[V]) get(id int64) (V, bool) {
	if id < 0 {
		var zero V
		return zero, false
	}
	mask := len(t.ids) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		switch t.ids[i] {
		case id:
			return t.vals[i], true
		case -1:
			var zero V
			return zero, false
		}
	}
}

// put sets id's value (id added when absent; id >= 0).
func (t *table[V]) put(id int64, v V) {
	mask := len(t.ids) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		switch t.ids[i] {
		case id:
			t.vals[i] = v
			return
		case -1:
			t.ids[i], t.vals[i] = id, v
			t.n++
			return
		}
	}
}

// del removes id, if present, shifting back the entries of its run that
// probed past it (no tombstones: lookups stay as short as the load).
func (t *table[V]) del(id int64) {
	mask := len(t.ids) - 1
	i := t.home(id)
	for ; t.ids[i] != id; i = (i + 1) & mask {
		if t.ids[i] == -1 {
			return
		}
	}
	t.n--
	for j := (i + 1) & mask; t.ids[j] != -1; j = (j + 1) & mask {
		// The entry at j may move to the hole at i when its home does
		// not lie (cyclically) in (i, j].
		if h := t.home(t.ids[j]); (j-h)&mask >= (j-i)&mask {
			t.ids[i], t.vals[i] = t.ids[j], t.vals[j]
			i = j
		}
	}
	t.ids[i] = -1
	var zero V
	t.vals[i] = zero
}

// len returns the number of entries.
func (t *table[V]) len() int { return t.n }
