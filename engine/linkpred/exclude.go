package linkpred

import (
	"fmt"
	"slices"
)

// ExcludeSelf is DGL's exclude="self": the seed edge ids themselves, as
// given (a copy).
func ExcludeSelf(seeds []int64) []int64 {
	return slices.Clone(seeds)
}

// Reverse maps an edge id to the id of its reverse edge, for
// ExcludeReverseID. Either Map is set (Map[e] is e's reverse: DGL's
// reverse_eids tensor), or Half is: the layout of a graph built from
// cat([src, dst]) -> cat([dst, src]), whose 2*Half edges pair e with e+Half
// (DGL's documented reverse_eids = cat([arange(E, 2E), arange(0, E)])),
// without materialising the map.
type Reverse struct {
	Map  []int64
	Half int64
}

// Len returns the number of edge ids r maps.
func (r Reverse) Len() int64 {
	if r.Map != nil {
		return int64(len(r.Map))
	}
	return 2 * r.Half
}

// Validate reports whether r is usable, naming the problem.
func (r Reverse) Validate() error {
	switch {
	case r.Map != nil && r.Half != 0:
		return fmt.Errorf("linkpred: reverse edge ids: both a map (%d entries) and a half-swap layout (half = %d) are given", len(r.Map), r.Half)
	case r.Map == nil && r.Half < 0:
		return fmt.Errorf("linkpred: reverse edge ids: half = %d, must be >= 0", r.Half)
	case r.Half >= 1<<62:
		return fmt.Errorf("linkpred: reverse edge ids: half = %d is too large", r.Half)
	}
	return nil
}

// of returns e's reverse; e must be in [0, r.Len()).
func (r Reverse) of(e int64) int64 {
	if r.Map != nil {
		return r.Map[e]
	}
	if e < r.Half {
		return e + r.Half
	}
	return e - r.Half
}

// ExcludeReverseID is DGL's exclude="reverse_id": the seed ids followed by
// their reverses, cat([eids, reverse_eids[eids]]), duplicates kept. A seed
// outside the map is an error naming its position (DGL raises an index
// error); mapped values are passed on unchecked, as DGL does (the
// neighbour sampler ignores ids that are not edges).
func ExcludeReverseID(seeds []int64, rev Reverse) ([]int64, error) {
	if err := rev.Validate(); err != nil {
		return nil, err
	}
	n := rev.Len()
	out := make([]int64, 2*len(seeds))
	copy(out, seeds)
	for i, e := range seeds {
		if e < 0 || e >= n {
			return nil, fmt.Errorf("linkpred: exclude reverse_id: seed edge ids[%d] = %d is outside the reverse edge map (%d entries)", i, e, n)
		}
		out[len(seeds)+i] = rev.of(e)
	}
	return out, nil
}

// TypedIDs is a list of edge ids of one edge type (a canonical edge type's
// name), an entry of DGL's dict of seed or excluded edges.
type TypedIDs struct {
	Type string
	IDs  []int64
}

// TypeReverse maps an edge type to the type that holds its reverse edges,
// an entry of DGL's reverse_etypes.
type TypeReverse struct {
	From, To string
}

// ExcludeReverseTypes is DGL's exclude="reverse_types" on a heterograph:
// the reverse of edge e of type t is edge e of type reverse[t]. It follows
// DGL's algorithm step by step, so its result is DGL's even where the map
// is not symmetric: start from the seeds (in their order); for each
// (From, To) of reverse in order, if From has ids, To gets From's ids when
// it had none (appended at the end, as a Python dict does), or the sorted
// unique union of both when it had some. Types must not repeat in seeds
// nor as From in reverse (they are Python dict keys).
func ExcludeReverseTypes(seeds []TypedIDs, reverse []TypeReverse) ([]TypedIDs, error) {
	out := make([]TypedIDs, 0, len(seeds)+len(reverse))
	at := map[string]int{}
	for i, s := range seeds {
		if _, dup := at[s.Type]; dup {
			return nil, fmt.Errorf("linkpred: exclude reverse_types: seed edge type %q is given twice (entry %d)", s.Type, i)
		}
		at[s.Type] = len(out)
		out = append(out, TypedIDs{Type: s.Type, IDs: slices.Clone(s.IDs)})
	}
	seen := map[string]bool{}
	for i, r := range reverse {
		if seen[r.From] {
			return nil, fmt.Errorf("linkpred: exclude reverse_types: edge type %q has two reverse types (entry %d)", r.From, i)
		}
		seen[r.From] = true
		k, ok := at[r.From]
		if !ok {
			continue
		}
		if v, ok := at[r.To]; ok {
			u := append(slices.Clone(out[k].IDs), out[v].IDs...)
			slices.Sort(u)
			out[v].IDs = slices.Compact(u)
		} else {
			at[r.To] = len(out)
			out = append(out, TypedIDs{Type: r.To, IDs: slices.Clone(out[k].IDs)})
		}
	}
	return out, nil
}
