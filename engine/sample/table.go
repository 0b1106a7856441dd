package sample

import (
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/rng"
)

// The append-unique hash table (as in WholeGraph) maps node id -> position in
// Result.Nodes. It is split into numShards open-addressing sub-tables by the
// top bits of a multiplicative hash, so that the parallel merge can give
// each shard to one goroutine (no atomics: a shard's keys are inserted by a
// single goroutine, in increasing order of first appearance).
//
// Each sub-table uses linear probing. A slot is live only when its stamp
// equals the table's current generation, so reset is O(1) and a rank's
// tables are reused across batches without clearing.

const (
	shardBits   = 6
	numShards   = 1 << shardBits
	minTableLog = 6
)

// shardOf returns the shard of key.
func shardOf(key int64) int {
	return int((uint64(key) * rng.Golden) >> (64 - shardBits))
}

type nodeTable struct {
	slots []slot
	mask  uint64
	shift uint
	gen   uint32
	n     int
}

type slot struct {
	key int64
	pos int32
	gen uint32
}

// reset empties the table, keeping its memory.
func (t *nodeTable) reset() {
	t.n = 0
	if t.slots == nil {
		t.alloc(minTableLog)
	}
	t.gen++
	if t.gen == 0 { // wrapped: stale stamps could alias, clear for real
		clear(t.slots)
		t.gen = 1
	}
}

func (t *nodeTable) alloc(lg uint) {
	t.slots = make([]slot, 1<<lg)
	t.mask = 1<<lg - 1
	t.shift = 64 - lg
	t.gen = 1
}

// home is the first probe of key: hash bits below the shard bits.
func (t *nodeTable) home(key int64) uint64 {
	return ((uint64(key) * rng.Golden) << shardBits) >> t.shift
}

// reserve makes room for n more keys (load factor <= 1/2).
func (t *nodeTable) reserve(n int) {
	need := 2 * (t.n + n)
	if need <= len(t.slots) {
		return
	}
	lg := uint(minTableLog)
	for 1<<lg < need {
		lg++
	}
	old, oldGen := t.slots, t.gen
	t.alloc(lg)
	for _, s := range old {
		if s.gen == oldGen {
			i := t.home(s.key)
			for t.slots[i].gen == t.gen {
				i = (i + 1) & t.mask
			}
			t.slots[i] = slot{key: s.key, pos: s.pos, gen: t.gen}
		}
	}
}

// insert returns the slot index and position stored for key, or stores pos
// for it and returns (slot, pos, true) when key is new.
func (t *nodeTable) insert(key int64, pos int32) (int, int32, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.reserve(max(1, t.n))
	}
	i := t.home(key)
	for {
		s := &t.slots[i]
		if s.gen != t.gen {
			*s = slot{key: key, pos: pos, gen: t.gen}
			t.n++
			return int(i), pos, true
		}
		if s.key == key {
			return int(i), s.pos, false
		}
		i = (i + 1) & t.mask
	}
}

// shardedTable is numShards nodeTables.
type shardedTable [numShards]nodeTable

func (st *shardedTable) reset() {
	for i := range st {
		st[i].reset()
	}
}

func (st *shardedTable) insert(key int64, pos int32) (int32, bool) {
	_, p, isNew := st[shardOf(key)].insert(key, pos)
	return p, isNew
}

// The dense table replaces the hash table on graphs with at most
// denseMaxNodes nodes: a per-rank []int32 indexed by node id holding 1 + the
// node's position (0: absent), 4 bytes per node (64 MiB per rank at the
// limit). A lookup is one load, where the hash table probes; it is kept
// empty between batches by clearing the entries of the batch's nodes.
// (Tests pick the table through shared.dense.)
var denseMaxNodes int64 = 1 << 24

// denseTable returns ws's dense table for n nodes, allocating it (all zero)
// on first use.
func (ws *workspace) denseTable(n int64) []int32 {
	if ws.dense == nil {
		ws.dense = make([]int32, n)
		mem.AdviseHuge(ws.dense) // read at random, as the graph is
	}
	return ws.dense
}

// clearDense removes keys (all in range) from the dense table d.
func clearDense(d []int32, keys []int64) {
	for _, v := range keys {
		d[v] = 0
	}
}
