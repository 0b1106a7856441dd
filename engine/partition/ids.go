package partition

import (
	"fmt"
	"sort"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// NumNodes returns the number of nodes (the end of the last patch).
func (p *Partitioned) NumNodes() int64 { return p.Offsets[len(p.Offsets)-1] }

// Owner returns the patch that owns the new id v, or -1 if v is out of range.
func (p *Partitioned) Owner(v int64) int {
	np := p.NumPatches()
	if np < 1 || v < 0 || v >= p.NumNodes() {
		return -1
	}
	// The first patch whose end is past v; it is never empty since the
	// previous patch ends at or before v.
	return sort.Search(np, func(q int) bool { return p.Offsets[q+1] > v })
}

// PatchRange returns the new ids [lo, hi) owned by patch q.
func (p *Partitioned) PatchRange(q int) (lo, hi int64) { return p.Offsets[q], p.Offsets[q+1] }

// OrigID returns the original id of new id v (in range): NewToOld[v], v
// itself for the identity, or what Ranked knows (-1 for a node it does
// not).
func (p *Partitioned) OrigID(v int64) int64 {
	switch {
	case p.NewToOld != nil:
		return p.NewToOld[v]
	case p.Ranked != nil:
		return p.Ranked.orig(v)
	}
	return v
}

// InternalID returns the new id of original id o (in range), as OrigID.
func (p *Partitioned) InternalID(o int64) int64 {
	switch {
	case p.OldToNew != nil:
		return p.OldToNew[o]
	case p.Ranked != nil:
		return p.Ranked.internal(o)
	}
	return o
}

// ToNew maps original ids to new ids: out[i] = InternalID(ids[i]). out
// must have len(ids) entries and may alias ids. Every id is checked first
// (in range; known to a Ranked part); on error out is left untouched.
func (p *Partitioned) ToNew(ids, out []int64) error {
	return p.mapIDs(ids, out, p.OldToNew, p.InternalID)
}

// ToOld maps new ids to original ids: out[i] = OrigID(ids[i]), checked as
// ToNew's.
func (p *Partitioned) ToOld(ids, out []int64) error {
	return p.mapIDs(ids, out, p.NewToOld, p.OrigID)
}

// mapIDs checks ids against [0, NumNodes) and writes perm[ids[i]] (or ids[i]
// when perm is nil, the identity; look(ids[i]) on a Ranked part, which
// must know every id) into out.
func (p *Partitioned) mapIDs(ids, out, perm []int64, look func(int64) int64) error {
	if len(out) != len(ids) {
		return fmt.Errorf("partition: len(out)=%d, want len(ids)=%d", len(out), len(ids))
	}
	n := p.NumNodes()
	m := int64(len(ids))
	k := par.ChunkCount(m, 0)
	errs := make([]error, k)
	par.Chunks(m, k, func(c int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			if v := ids[i]; uint64(v) >= uint64(n) {
				errs[c] = fmt.Errorf("partition: node id %d at position %d is out of range [0, %d)", v, i, n)
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if p.Ranked != nil {
		mapped := make([]int64, m)
		for i, v := range ids {
			if mapped[i] = look(v); mapped[i] < 0 {
				return fmt.Errorf("partition: node id %d at position %d is not known to this rank (its owner's)", v, i)
			}
		}
		copy(out, mapped)
		return nil
	}
	if perm == nil {
		copy(out, ids)
		return nil
	}
	par.Chunks(m, k, func(_ int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			out[i] = perm[ids[i]]
		}
	})
	return nil
}

// PermuteRows gathers the rows of a row-major matrix into the new node
// order: dst row i = src row newToOld[i], each row rowBytes bytes, in
// parallel. A nil newToOld is the identity (dst = src). dst must hold
// len(newToOld) rows and must not overlap src.
func PermuteRows(dst, src []byte, rowBytes int, newToOld []int64) error {
	if rowBytes < 0 {
		return fmt.Errorf("partition: rowBytes=%d is negative", rowBytes)
	}
	if newToOld == nil {
		if len(dst) != len(src) {
			return fmt.Errorf("partition: len(dst)=%d, want len(src)=%d (identity permutation)", len(dst), len(src))
		}
		copy(dst, src)
		return nil
	}
	n := int64(len(newToOld))
	rb := int64(rowBytes)
	if int64(len(dst)) != n*rb {
		return fmt.Errorf("partition: len(dst)=%d, want %d rows of %d bytes = %d", len(dst), n, rb, n*rb)
	}
	if rb == 0 {
		return nil
	}
	if int64(len(src))%rb != 0 {
		return fmt.Errorf("partition: len(src)=%d is not a multiple of rowBytes=%d", len(src), rb)
	}
	srcRows := int64(len(src)) / rb
	for i, v := range newToOld {
		if uint64(v) >= uint64(srcRows) {
			return fmt.Errorf("partition: newToOld[%d]=%d is out of range [0, %d) (rows of src)", i, v, srcRows)
		}
	}
	par.Chunks(n, par.ChunkCount(n*max(rb/64, 1), 0), func(_ int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			o := newToOld[i]
			copy(dst[i*rb:(i+1)*rb], src[o*rb:(o+1)*rb])
		}
	})
	return nil
}
