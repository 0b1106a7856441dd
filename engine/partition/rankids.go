package partition

import (
	"fmt"
	"slices"
)

// RankIDs is what one rank of a partitioned graph knows of the numbering
// when it holds its own range of new ids and not the whole maps
// (Partitioned.Ranked, engine/distributed's dsp parts): the original ids
// of the nodes it owns and of the others it holds (the sources of its
// in-edges), and of the nodes its loaders resolved with the other ranks
// (WithIDs: a loader's seeds). Everything it holds is O(owned + halo +
// resolved), nothing O(N); the original id of any other node is its
// owner's to give.
type RankIDs struct {
	lo    int64
	owned []int64 // original ids of new ids [lo, lo+len(owned)), increasing
	held  idPairs // new -> original, the other nodes held
	// toOld and toNew are the resolved nodes' (WithIDs), both ways.
	toOld, toNew idPairs
}

// NewRankIDs returns the ids of a rank that owns new ids [lo,
// lo+len(owned)) whose original ids are owned (increasing) and holds the
// other nodes heldNew (new ids) of original ids heldOrig. The slices are
// kept (owned) or copied (held).
func NewRankIDs(lo int64, owned, heldNew, heldOrig []int64) (*RankIDs, error) {
	for i := 1; i < len(owned); i++ {
		if owned[i] <= owned[i-1] {
			return nil, fmt.Errorf("partition: owned original ids are not increasing at %d (%d after %d)", i, owned[i], owned[i-1])
		}
	}
	held, err := newIDPairs(heldNew, heldOrig)
	if err != nil {
		return nil, err
	}
	return &RankIDs{lo: lo, owned: owned, held: held}, nil
}

// Owned returns the original ids of the owned nodes (new ids lo, lo+1,
// ...), increasing. The slice is the RankIDs' own: read only.
func (r *RankIDs) Owned() []int64 { return r.owned }

// NumHeld returns the number of the other nodes held (the halo).
func (r *RankIDs) NumHeld() int64 { return int64(len(r.held.keys)) }

// Bytes returns the memory the ids hold.
func (r *RankIDs) Bytes() int64 {
	return 8 * int64(len(r.owned)+2*len(r.held.keys)+2*len(r.toOld.keys)+2*len(r.toNew.keys))
}

// orig returns the original id of new id v, or -1 when r does not know it.
func (r *RankIDs) orig(v int64) int64 {
	if i := v - r.lo; i >= 0 && i < int64(len(r.owned)) {
		return r.owned[i]
	}
	if o, ok := r.held.get(v); ok {
		return o
	}
	if o, ok := r.toOld.get(v); ok {
		return o
	}
	return -1
}

// internal returns the new id of original id o, or -1 when r does not know
// it (of the nodes held, only the owned ones are found by original id).
func (r *RankIDs) internal(o int64) int64 {
	if i, ok := slices.BinarySearch(r.owned, o); ok {
		return r.lo + int64(i)
	}
	if v, ok := r.toNew.get(o); ok {
		return v
	}
	return -1
}

// WithIDs returns a copy of p whose Ranked ids also know the nodes of
// original ids orig as new ids internal (a loader's seeds, resolved with
// the other ranks): its samplers and pipelines take the copy, the graph
// and offsets shared. p must be Ranked; ids p knows already may repeat
// (they must agree).
func (p *Partitioned) WithIDs(orig, internal []int64) (*Partitioned, error) {
	r := p.Ranked
	if r == nil {
		return nil, fmt.Errorf("partition: WithIDs on a partition that holds its maps (or none)")
	}
	if len(orig) != len(internal) {
		return nil, fmt.Errorf("partition: %d original ids for %d new ids", len(orig), len(internal))
	}
	n := p.NumNodes()
	for i, v := range internal {
		if o := orig[i]; o < 0 || o >= n || v < 0 || v >= n {
			return nil, fmt.Errorf("partition: node %d (new id %d) is out of range [0, %d)", o, v, n)
		}
	}
	toOld, err := newIDPairs(append(slices.Clone(r.toOld.keys), internal...), append(slices.Clone(r.toOld.vals), orig...))
	if err != nil {
		return nil, err
	}
	toNew, err := newIDPairs(append(slices.Clone(r.toNew.keys), orig...), append(slices.Clone(r.toNew.vals), internal...))
	if err != nil {
		return nil, err
	}
	out := *p
	out.Ranked = &RankIDs{lo: r.lo, owned: r.owned, held: r.held, toOld: toOld, toNew: toNew}
	return &out, nil
}

// idPairs maps keys to values: keys sorted, without repeats.
type idPairs struct{ keys, vals []int64 }

// newIDPairs sorts the pairs (keys[i], vals[i]) by key; a key repeated
// with another value is an error, with the same value kept once.
func newIDPairs(keys, vals []int64) (idPairs, error) {
	if len(keys) != len(vals) {
		return idPairs{}, fmt.Errorf("partition: %d keys for %d values", len(keys), len(vals))
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	out := idPairs{keys: make([]int64, 0, len(keys)), vals: make([]int64, 0, len(keys))}
	for _, i := range order {
		if m := len(out.keys); m > 0 && out.keys[m-1] == keys[i] {
			if out.vals[m-1] != vals[i] {
				return idPairs{}, fmt.Errorf("partition: node %d is mapped to both %d and %d", keys[i], out.vals[m-1], vals[i])
			}
			continue
		}
		out.keys = append(out.keys, keys[i])
		out.vals = append(out.vals, vals[i])
	}
	return out, nil
}

// get returns the value of key k.
func (m idPairs) get(k int64) (int64, bool) {
	if i, ok := slices.BinarySearch(m.keys, k); ok {
		return m.vals[i], true
	}
	return 0, false
}

// slot returns the position of new id v among the owned nodes then the
// held ones (by new id), or -1 when v is neither.
func (r *RankIDs) slot(v int64) int64 {
	if i := v - r.lo; i >= 0 && i < int64(len(r.owned)) {
		return i
	}
	if i, ok := slices.BinarySearch(r.held.keys, v); ok {
		return int64(len(r.owned) + i)
	}
	return -1
}

// NumTimeSlots returns how many node times a sampler over p reads (the
// range of TimeSlot): one per node, or on a Ranked part one per owned and
// held node (a rank samples the in-edges of its owned nodes, whose sources
// it holds).
func (p *Partitioned) NumTimeSlots() int64 {
	if r := p.Ranked; r != nil {
		return int64(len(r.owned) + len(r.held.keys))
	}
	return p.NumNodes()
}

// TimeSlot returns the position of new id v's time in node times: its
// original id, or on a Ranked part its position among the owned nodes
// (new id order) then the held ones (-1 for a node it does not hold).
func (p *Partitioned) TimeSlot(v int64) int64 {
	if r := p.Ranked; r != nil {
		return r.slot(v)
	}
	return p.OrigID(v)
}

// TimeSlotIDs returns the original id of every time slot (TimeSlot's
// inverse): 0, 1, ..., N-1, or a Ranked part's owned then held nodes.
func (p *Partitioned) TimeSlotIDs() []int64 {
	if r := p.Ranked; r != nil {
		return append(slices.Clone(r.owned), r.held.vals...)
	}
	out := make([]int64, p.NumNodes())
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
