package cache

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// Size is the size of a hot tier. Exactly one way is used: Bytes when > 0,
// else Fraction when > 0, else Auto.
type Size struct {
	// Bytes is the hot tier's size in bytes (rows of every cached tensor
	// together).
	Bytes int64
	// Fraction is the fraction of the nodes whose rows are hot, in (0, 1].
	Fraction float64
	// Auto: what fits in Budget bytes after Reserve bytes are set aside
	// (for the model and its activations).
	Auto            bool
	Budget, Reserve int64
}

// Rows returns how many nodes' rows are hot for a graph of numNodes nodes
// whose cached rows take rowBytes bytes per node, at most numNodes.
func (s Size) Rows(numNodes, rowBytes int64) (int64, error) {
	if numNodes < 0 || rowBytes < 0 {
		return 0, fmt.Errorf("cache: %d nodes of %d bytes", numNodes, rowBytes)
	}
	var bytes int64
	switch {
	case s.Bytes < 0 || s.Fraction < 0 || s.Budget < 0 || s.Reserve < 0:
		return 0, fmt.Errorf("cache: size %+v has a negative field", s)
	case s.Bytes > 0:
		bytes = s.Bytes
	case s.Fraction != 0: // NaN too
		if err := bounds.Fraction(s.Fraction, "cache: fraction"); err != nil {
			return 0, err
		}
		return int64(s.Fraction * float64(numNodes)), nil
	case s.Auto:
		bytes = max(0, s.Budget-s.Reserve)
	default:
		return 0, nil
	}
	if rowBytes == 0 {
		return numNodes, nil
	}
	return min(numNodes, bytes/rowBytes), nil
}

// Rank returns the node ids 0..len(score)-1 ordered by score, highest first,
// ties by id: the order in which a policy fills the hot tier.
func Rank(score []int64) []int64 {
	order := make([]int64, len(score))
	for i := range order {
		order[i] = int64(i)
	}
	slices.SortStableFunc(order, func(a, b int64) int { return cmp.Compare(score[b], score[a]) })
	return order
}

// ByInDegree returns g's in-degrees (g is an in-neighbour CSC: node v's
// in-degree is Indptr[v+1]-Indptr[v]), the PaGraph policy's score. Pass the
// partition's graph, whose ids are the store's rows.
func ByInDegree(g *graph.CSC) ([]int64, error) {
	if g == nil || int64(len(g.Indptr)) != g.NumNodes+1 {
		return nil, errors.New("cache: graph is nil or its indptr does not have NumNodes+1 entries")
	}
	deg := make([]int64, g.NumNodes)
	for v := range deg {
		deg[v] = g.Indptr[v+1] - g.Indptr[v]
	}
	return deg, nil
}

// Tiered is a feature.TierGatherer over a feature.Store: for the names it
// caches, a contiguous copy of the hot rows (taken when it is made: a name
// the store replaces later needs a new Tiered), the rest read from the
// store. Safe for concurrent gathers.
type Tiered struct {
	store *feature.Store
	slot  []int32               // node -> row in the hot copies, -1: cold
	hot   map[string]mem.Tensor // name -> hot rows, in the order of ids
	ids   []int64
}

var _ feature.TierGatherer = (*Tiered)(nil)

// New copies the rows hot (internal ids, distinct) of each of names out of
// store into a hot tier. Names not given are always read from the store.
func New(store *feature.Store, names []string, hot []int64) (*Tiered, error) {
	if store == nil {
		return nil, errors.New("cache: store is nil")
	}
	n := store.NumNodes()
	if int64(len(hot)) > math.MaxInt32 {
		return nil, fmt.Errorf("cache: %d hot rows, too many", len(hot))
	}
	t := &Tiered{store: store, slot: make([]int32, n), hot: map[string]mem.Tensor{}, ids: slices.Clone(hot)}
	for i := range t.slot {
		t.slot[i] = -1
	}
	for i, v := range hot {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("cache: hot[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if t.slot[v] >= 0 {
			return nil, fmt.Errorf("cache: hot[%d] = %d repeats hot[%d]", i, v, t.slot[v])
		}
		t.slot[v] = int32(i)
	}
	for _, name := range names {
		src, ok := store.Get(name)
		if !ok {
			return nil, fmt.Errorf("cache: no node data named %q (have %v)", name, store.Names())
		}
		if _, dup := t.hot[name]; dup {
			return nil, fmt.Errorf("cache: %q is named twice", name)
		}
		shape := append([]int64{int64(len(hot))}, src.Shape[1:]...)
		h := mem.Tensor{DType: src.DType, Shape: shape, Data: make([]byte, len(hot)*src.RowBytes())}
		if err := store.Gather(name, h.Data, hot, 0); err != nil {
			return nil, fmt.Errorf("cache: copying the hot rows: %w", err)
		}
		t.hot[name] = h
	}
	return t, nil
}

// Hot returns the hot node ids, in the order of the hot copies' rows.
func (t *Tiered) Hot() []int64 { return t.ids }

// HotBytes returns the size of the hot copies.
func (t *Tiered) HotBytes() int64 {
	var n int64
	for _, h := range t.hot {
		n += int64(len(h.Data))
	}
	return n
}

// NumNodes returns the store's node count.
func (t *Tiered) NumNodes() int64 { return t.store.NumNodes() }

// Names returns the store's names.
func (t *Tiered) Names() []string { return t.store.Names() }

// Get returns the store's tensor name.
func (t *Tiered) Get(name string) (mem.Tensor, bool) { return t.store.Get(name) }

// Gather is GatherTiers without the counts.
func (t *Tiered) Gather(name string, dst []byte, ids []int64, threads int) error {
	_, err := t.GatherTiers(name, dst, ids, threads)
	return err
}

// GatherTiers copies the rows ids of name into dst (len(ids) rows, in input
// order): hot rows from the hot copy, the others from the store, and counts
// them. On the CPU build both tiers are host memory.
func (t *Tiered) GatherTiers(name string, dst []byte, ids []int64, threads int) (feature.TierCounts, error) {
	var tc feature.TierCounts
	h, cached := t.hot[name]
	if !cached {
		return t.store.GatherTiers(name, dst, ids, threads)
	}
	rb := h.RowBytes()
	if len(dst) != len(ids)*rb {
		return tc, fmt.Errorf("cache: len(dst) = %d, want len(ids)*RowBytes = %d*%d", len(dst), len(ids), rb)
	}
	n := int64(len(t.slot))
	var hotPos, coldPos []int
	var hotSlots, coldIDs []int64
	for i, v := range ids {
		if v < 0 || v >= n {
			return tc, fmt.Errorf("cache: ids[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if s := t.slot[v]; s >= 0 {
			hotPos, hotSlots = append(hotPos, i), append(hotSlots, int64(s))
		} else {
			coldPos, coldIDs = append(coldPos, i), append(coldIDs, v)
		}
	}
	tc.HotRows = int64(len(hotPos))
	tc.Bytes[mem.KindHost] = int64(len(hotPos)) * int64(rb)
	switch {
	case len(coldPos) == 0:
		return tc, feature.Gather(dst, h, hotSlots, threads)
	case len(hotPos) == 0:
		cold, err := t.store.GatherTiers(name, dst, ids, threads)
		cold.HotRows = tc.HotRows
		return cold, err
	}
	// One gather per tier, then the rows go to their input positions.
	hbuf := make([]byte, len(hotPos)*rb)
	if err := feature.Gather(hbuf, h, hotSlots, threads); err != nil {
		return tc, err
	}
	cbuf := make([]byte, len(coldPos)*rb)
	cold, err := t.store.GatherTiers(name, cbuf, coldIDs, threads)
	if err != nil {
		return tc, err
	}
	tc.Add(cold)
	for k, i := range hotPos {
		copy(dst[i*rb:(i+1)*rb], hbuf[k*rb:(k+1)*rb])
	}
	for k, i := range coldPos {
		copy(dst[i*rb:(i+1)*rb], cbuf[k*rb:(k+1)*rb])
	}
	return tc, nil
}
