package rowcache

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// trace is the fixed access sequence of the reference tests, replayed on a
// cache of 5 rows: each access looks the id up and, on a miss, inserts it.
var trace = []int64{1, 2, 3, 1, 4, 5, 6, 2, 7, 1, 3, 8, 2, 9, 8, 9, 10, 11, 5}

// replay runs trace on a 5-row cache with policy p and returns the evicted
// ids in order and the ids of the hits.
func replay(t *testing.T, p Policy) (evicted, hits []int64) {
	t.Helper()
	const rb = 8
	c, err := New(5*(rb+EntryOverhead), rb, p)
	require.NoError(t, err)
	require.EqualValues(t, 5, c.Capacity())
	c.onEvict = func(id int64) { evicted = append(evicted, id) }
	row := make([]byte, rb)
	for _, id := range trace {
		if miss := c.Lookup([]int64{id}, row, nil); len(miss) == 0 {
			require.Equal(t, uint64(id), binary.LittleEndian.Uint64(row), "row of %d", id)
			hits = append(hits, id)
			continue
		}
		binary.LittleEndian.PutUint64(row, uint64(id))
		c.Insert([]int64{id}, row)
		require.LessOrEqual(t, c.Len(), 5)
	}
	st := c.Stats()
	require.EqualValues(t, len(hits), st.Hits)
	require.EqualValues(t, len(trace)-len(hits), st.Misses)
	require.EqualValues(t, len(evicted), st.Evictions)
	return evicted, hits
}

// LRU, queue most recent first: 1 2 3 fill [3 2 1]; 1 hits [1 3 2]; 4 5
// fill [5 4 1 3 2]; 6 evicts 2; 2 evicts 3; 7 evicts 1; 1 evicts 4; 3
// evicts 5; 8 evicts 6; 2 hits; 9 evicts 7; 8 9 hit [9 8 2 3 1]; 10 evicts
// 1; 11 evicts 3; 5 evicts 2.
func TestLRUReference(t *testing.T) {
	ev, hits := replay(t, LRU)
	require.Equal(t, []int64{2, 3, 1, 4, 5, 6, 7, 1, 3, 2}, ev)
	require.Equal(t, []int64{1, 2, 8, 9}, hits)
}

// SIEVE, queue newest first, hand from the tail towards the head: after
// 1..5 the queue is [5 4 3 2 1] with 1 visited. 6: the hand clears 1 and
// evicts 2, stopping at 3. 2 evicts 3 (hand at 4), 7 evicts 4 (hand at 5);
// 1 hits; 3 evicts 5 (hand at 6); 8 evicts 6 (hand at 2); 2 hits; 9: the
// hand clears 2 and evicts 7 (hand at 3); 8 and 9 hit; 10 evicts 3 (hand
// at 8); 11: clears 8 and 9, evicts 10, the hand falls off the head; 5:
// the hand restarts at the tail, clears 1 and evicts 2.
func TestSieveReference(t *testing.T) {
	ev, hits := replay(t, SIEVE)
	require.Equal(t, []int64{2, 3, 4, 5, 6, 7, 3, 10, 2}, ev)
	require.Equal(t, []int64{1, 1, 2, 8, 9}, hits)
}

// S3-FIFO with 5 rows: small queue 1 row (10%, at least one), main 4,
// ghost 4. 1 2 3 enter small; 1 hits (freq 1); 4 5 fill small [5 4 3 2 1].
// 6: small's tail 1 was hit: to main; 2 was not: to the ghost, evicted. 2
// (a ghost) evicts 3 to the ghost and enters main [2 1]. 7 evicts 4; 1 hits
// (main, freq 1); 3 (a ghost) evicts 5 and enters main [3 2 1]; 8 evicts 6;
// 2 hits (freq 1); 9 evicts 7 (ghost now [7 6 5 4]); 8 and 9 hit. 10: small
// [9 8]: 8 was hit, to main [8 3 2 1]; 9 too, main overflows [9 8 3 2 1]:
// main's tail 1 (freq 1) is reinserted at freq 0, then 2 likewise, and 3
// (freq 0) is evicted; 10 enters the empty small queue. 11 evicts 10 to the
// ghost (dropping 4); 5 evicts 11 (dropping 5 from the ghost, so 5 enters
// small).
func TestS3FIFOReference(t *testing.T) {
	ev, hits := replay(t, S3FIFO)
	require.Equal(t, []int64{2, 3, 4, 5, 6, 7, 3, 10, 11}, ev)
	require.Equal(t, []int64{1, 1, 2, 8, 9}, hits)
}

// A one-hit-wonder scan does not flush S3-FIFO's main queue: rows hit
// twice survive a scan of new ids as long as the cache, as in the paper's
// motivation; LRU loses them.
func TestS3FIFOScanResistance(t *testing.T) {
	survivors := func(p Policy) int {
		c, err := New(100*(8+EntryOverhead), 8, p)
		require.NoError(t, err)
		row := make([]byte, 8)
		access := func(id int64) {
			if len(c.Lookup([]int64{id}, row, nil)) == 1 {
				c.Insert([]int64{id}, row)
			}
		}
		for round := 0; round < 3; round++ {
			for id := int64(0); id < 50; id++ {
				access(id)
			}
		}
		for id := int64(1000); id < 1100; id++ {
			access(id)
		}
		n := 0
		for id := int64(0); id < 50; id++ {
			if len(c.Lookup([]int64{id}, row, nil)) == 0 {
				n++
			}
		}
		return n
	}
	require.Equal(t, 50, survivors(S3FIFO))
	require.Equal(t, 0, survivors(LRU))
}

func TestBatchesAndSizes(t *testing.T) {
	_, err := New(100, 0, LRU)
	require.Error(t, err)
	_, err = New(-1, 8, LRU)
	require.Error(t, err)
	_, err = New(100, 8, Policy(7))
	require.Error(t, err)
	c, err := New(10, 8, SIEVE) // too small for a row: holds nothing
	require.NoError(t, err)
	require.Zero(t, c.Capacity())
	c.Insert([]int64{1}, make([]byte, 8))
	require.Equal(t, []int{0, 1}, c.Lookup([]int64{1, 2}, make([]byte, 16), nil))

	for _, p := range []Policy{S3FIFO, SIEVE, LRU} {
		rb := 12
		c, err := New(3*int64(rb+EntryOverhead), rb, p)
		require.NoError(t, err)
		rows := func(ids ...int64) []byte {
			b := make([]byte, len(ids)*rb)
			for i, id := range ids {
				for k := range rb {
					b[i*rb+k] = byte(id*7 + int64(k))
				}
			}
			return b
		}
		c.Insert([]int64{4, 9, 4}, rows(4, 9, 4)) // a repeated id is inserted once
		require.Equal(t, 2, c.Len())
		dst := make([]byte, 4*rb)
		miss := c.Lookup([]int64{9, 5, 4, 9}, dst, nil)
		require.Equal(t, []int{1}, miss, p)
		want := rows(9, 5, 4, 9)
		for _, i := range []int{0, 2, 3} {
			require.Equal(t, want[i*rb:(i+1)*rb], dst[i*rb:(i+1)*rb])
		}
		require.Equal(t, p, c.Policy())
		name, err := ParsePolicy(p.String())
		require.NoError(t, err)
		require.Equal(t, p, name)
	}
	p, err := ParsePolicy("S3-FIFO")
	require.NoError(t, err)
	require.Equal(t, S3FIFO, p)
	_, err = ParsePolicy("clock")
	require.ErrorContains(t, err, "s3fifo, sieve, lru")
}

// Concurrent lookups and inserts (run under -race) keep every cached row
// the row of its id, and the cache within its capacity.
func TestConcurrent(t *testing.T) {
	for _, p := range []Policy{S3FIFO, SIEVE, LRU} {
		t.Run(p.String(), func(t *testing.T) {
			const rb = 16
			c, err := New(200*(rb+EntryOverhead), rb, p)
			require.NoError(t, err)
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 1))
					ids := make([]int64, 32)
					dst := make([]byte, len(ids)*rb)
					for range 300 {
						for i := range ids {
							ids[i] = int64(r.ExpFloat64() * 150)
						}
						miss := c.Lookup(ids, dst, nil)
						missIDs := make([]int64, len(miss))
						rows := make([]byte, len(miss)*rb)
						for k, i := range miss {
							missIDs[k] = ids[i]
							binary.LittleEndian.PutUint64(rows[k*rb:], uint64(ids[i]))
							binary.LittleEndian.PutUint64(rows[k*rb+8:], ^uint64(ids[i]))
						}
						for i, id := range ids {
							if !containsInt(miss, i) {
								if got := binary.LittleEndian.Uint64(dst[i*rb:]); got != uint64(id) || binary.LittleEndian.Uint64(dst[i*rb+8:]) != ^uint64(id) {
									panic(fmt.Sprintf("row of %d holds %d", id, got))
								}
							}
						}
						c.Insert(missIDs, rows)
					}
				}()
			}
			wg.Wait()
			require.LessOrEqual(t, int64(c.Len()), c.Capacity())
			st := c.Stats()
			require.EqualValues(t, 4*300*32, st.Hits+st.Misses)
			require.Positive(t, st.Hits)
		})
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Close frees the rows: lookups then miss and inserts do nothing.
func TestCloseFreesRows(t *testing.T) {
	c, err := New(10*int64(8+EntryOverhead), 8, LRU)
	require.NoError(t, err)
	c.Insert([]int64{1, 2}, make([]byte, 16))
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	require.Equal(t, []int{0, 1}, c.Lookup([]int64{1, 2}, make([]byte, 16), nil))
	c.Insert([]int64{3}, make([]byte, 8))
	require.Equal(t, []int{0}, c.Lookup([]int64{3}, make([]byte, 8), nil))
}
