package rowcache

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableMatchesMap: random puts, deletes and gets on tables of a few
// sizes agree with a Go map after every step (deletes shift runs back,
// across the end of the array too: ids are drawn from a range a few times
// the table so that runs are long and collide), and a negative id is never
// found.
func TestTableMatchesMap(t *testing.T) {
	for _, n := range []int64{1, 5, 64, 1000} {
		tb := newTable[int32](n)
		ref := map[int64]int32{}
		r := rand.New(rand.NewPCG(uint64(n), 9))
		span := int64(len(tb.ids)) * 3
		for step := range 20000 {
			id := r.Int64N(span)
			switch {
			case r.IntN(2) == 0 && int64(len(ref)) < n:
				tb.put(id, int32(step))
				ref[id] = int32(step)
			default:
				tb.del(id)
				delete(ref, id)
			}
			require.Equal(t, len(ref), tb.len())
			if step%499 == 0 {
				for q := range span {
					v, ok := tb.get(q)
					if w, in := ref[q]; in != ok || w != v {
						t.Fatalf("n %d step %d: id %d gives %d, %v; the map %d, %v", n, step, q, v, ok, w, in)
					}
				}
			}
		}
		_, ok := tb.get(-1)
		require.False(t, ok)
	}
}

// TestInsertAt: InsertAt caches the rows at the given positions only, as
// Insert of those rows would, and a negative id is never cached (nor
// found, so never a hit on an empty slot).
func TestInsertAt(t *testing.T) {
	const rb = 8
	c, err := New(10*(rb+EntryOverhead), rb, LRU)
	require.NoError(t, err)
	defer c.Close()
	ids := []int64{7, -1, 3, 9, 4}
	rows := make([]byte, len(ids)*rb)
	for i := range rows {
		rows[i] = byte(i)
	}
	c.InsertAt(ids, []int{0, 1, 3}, rows)
	require.Equal(t, 2, c.Len())
	dst := make([]byte, len(ids)*rb)
	miss := c.Lookup(ids, dst, nil)
	require.Equal(t, []int{1, 2, 4}, miss)
	require.Equal(t, rows[0:rb], dst[0:rb])
	require.Equal(t, rows[3*rb:4*rb], dst[3*rb:4*rb])
}
