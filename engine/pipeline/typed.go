package pipeline

import (
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// TypedView is a batch of a typed graph (graph.Types) split by type, the
// form DGL's heterogeneous blocks and PyG's HeteroData take. It is computed
// by the pipeline's sampler workers (Options.Types) so that the consumer
// only wraps arrays. All tensors are int64, from the batch's allocator.
//
// Node order: the nodes of Batch.Nodes grouped by type, in type order, each
// type's nodes in their Nodes order (stable), so a type's seeds come first
// among its nodes and its nodes stay level by level. A node's "rank" is its
// position among the nodes of its type.
type TypedView struct {
	Nodes       mem.Tensor // [n] type-local ids (original id - NodeOffsets[type]), grouped by type
	Order       mem.Tensor // [n] position in Batch.Nodes of each entry of Nodes
	NodeOffsets mem.Tensor // [T+1] where each type's nodes start in Nodes
	HopCounts   mem.Tensor // [T*(L+1)], row-major by type: nodes of type t first reached at level l
	Blocks      []TypedBlock
}

// TypedBlock is one hop's block (Batch.Blocks[h]) split by relation: the
// edges grouped by relation in relation order, each relation's edges in
// the block's CSC order (stable), so that a relation's edges are a CSC over
// its destination type's block destinations.
type TypedBlock struct {
	// Shape is [3*T]: row 0 the number of block destinations of each type,
	// row 1 the number of block sources of each type, row 2 the rank of each
	// type's first block destination (0 unless the block's DstOffset > 0).
	Shape       mem.Tensor
	EdgeOffsets mem.Tensor // [R+1] where each relation's edges start
	Src         mem.Tensor // [E] rank of each edge's source within its type
	Dst         mem.Tensor // [E] rank of each edge's destination within its type
	EdgeIDs     mem.Tensor // [E] relation-local edge ids (original id - EdgeOffsets[r])
	// Indptr is, relation after relation, relation r's CSC offsets over the
	// block destinations of its destination type d: Shape[d]+1 entries,
	// from 0 to relation r's edge count.
	Indptr mem.Tensor
}

// release frees v's tensors through free.
func (v *TypedView) release(free func(*mem.Tensor)) {
	if v == nil {
		return
	}
	free(&v.Nodes)
	free(&v.Order)
	free(&v.NodeOffsets)
	free(&v.HopCounts)
	for i := range v.Blocks {
		tb := &v.Blocks[i]
		free(&tb.Shape)
		free(&tb.EdgeOffsets)
		free(&tb.Src)
		free(&tb.Dst)
		free(&tb.EdgeIDs)
		free(&tb.Indptr)
	}
}

// SetTyped computes b.Typed for a batch of a graph typed by t, from b's
// Nodes (original ids), HopCounts and Blocks, which must not have been
// taken yet. O(nodes + edges) plus a binary search over the type offsets
// per node and edge. On error b.Typed stays nil and nothing stays
// allocated.
func (b *Batch) SetTyped(t *graph.Types) error {
	if t == nil {
		return errors.New("pipeline: SetTyped: types are nil")
	}
	if b.Typed != nil {
		return errors.New("pipeline: SetTyped: the batch already has a typed view")
	}
	alloc := b.alloc
	if alloc == nil {
		alloc = mem.Heap{}
		b.alloc = alloc
	}
	nodes := mem.Int64s(b.Nodes.Data)
	hops := mem.Int64s(b.HopCounts.Data)
	if int64(len(nodes)) != shapeLen(b.Nodes) || int64(len(hops)) != shapeLen(b.HopCounts) || len(hops) != len(b.Blocks)+1 {
		return errors.New("pipeline: SetTyped: the batch's nodes or hop counts were taken or are malformed")
	}
	T, R := t.NumNodeTypes(), t.NumRelations()
	numNodes := t.NodeOffsets[T]
	v := &TypedView{Blocks: make([]TypedBlock, len(b.Blocks))}
	ok := false
	defer func() {
		if !ok {
			v.release(func(x *mem.Tensor) {
				if x.Data != nil {
					alloc.Free(x.Data)
					x.Data = nil
				}
			})
		}
	}()
	// newT allocates an int64 tensor; zeroed ones hold counts (allocators
	// need not zero), the others are written whole.
	newT := func(n int, zeroed bool) (mem.Tensor, []int64, error) {
		buf, view, err := mem.AllocInt64(alloc, n)
		if err != nil {
			return mem.Tensor{}, nil, err
		}
		if zeroed {
			clear(view)
		}
		return mem.Tensor{DType: mem.Int64, Shape: []int64{int64(n)}, Data: buf}, view, nil
	}

	// Types, counts per type and level, ranks.
	n := len(nodes)
	types := make([]int32, n)
	rank := make([]int64, n)
	var err error
	var off, levels []int64
	if v.NodeOffsets, off, err = newT(T+1, true); err != nil {
		return err
	}
	L1 := len(hops)
	if v.HopCounts, levels, err = newT(T*L1, true); err != nil {
		return err
	}
	counts := off[1:] // counts first, turned into offsets below
	lvl, end := 0, int64(0)
	if L1 > 0 {
		end = hops[0]
	}
	for i, x := range nodes {
		if x < 0 || x >= numNodes {
			return fmt.Errorf("pipeline: SetTyped: node %d = %d is out of range [0, %d)", i, x, numNodes)
		}
		for int64(i) >= end && lvl+1 < L1 {
			lvl++
			end += hops[lvl]
		}
		ty := t.NodeType(x)
		types[i] = ty
		rank[i] = counts[ty]
		counts[ty]++
		levels[int(ty)*L1+lvl]++
	}
	for ty := 1; ty <= T; ty++ {
		off[ty] += off[ty-1]
	}
	var tnodes, order []int64
	if v.Nodes, tnodes, err = newT(n, false); err != nil {
		return err
	}
	if v.Order, order, err = newT(n, false); err != nil {
		return err
	}
	for i, x := range nodes {
		ty := types[i]
		p := off[ty] + rank[i]
		tnodes[p] = x - t.NodeOffsets[ty]
		order[p] = int64(i)
	}

	// Blocks.
	relCount := make([]int64, R)
	for h := range b.Blocks {
		blk := &b.Blocks[h]
		indptr, indices, eids := mem.Int64s(blk.Indptr.Data), mem.Int64s(blk.Indices.Data), mem.Int64s(blk.EdgeIDs.Data)
		if int64(len(indptr)) != blk.NumDst+1 || len(indices) != len(eids) || blk.DstOffset < 0 ||
			blk.DstOffset+blk.NumDst > int64(n) || blk.NumSrc > int64(n) || blk.NumSrc < 0 {
			return fmt.Errorf("pipeline: SetTyped: block %d was taken or is malformed", h)
		}
		if indptr[0] != 0 || indptr[blk.NumDst] != int64(len(eids)) {
			return fmt.Errorf("pipeline: SetTyped: block %d indptr spans [%d, %d), not its %d edges", h, indptr[0], indptr[blk.NumDst], len(eids))
		}
		tb := &v.Blocks[h]
		var shape []int64
		if tb.Shape, shape, err = newT(3*T, true); err != nil {
			return err
		}
		numDst, numSrc, dstRank := shape[:T], shape[T:2*T], shape[2*T:]
		for i := int64(0); i < blk.NumSrc; i++ {
			numSrc[types[i]]++
		}
		for i := int64(0); i < blk.DstOffset; i++ {
			dstRank[types[i]]++
		}
		for i := blk.DstOffset; i < blk.DstOffset+blk.NumDst; i++ {
			numDst[types[i]]++
		}
		E := len(eids)
		var eoff, src, dst, leid, ip []int64
		if tb.EdgeOffsets, eoff, err = newT(R+1, true); err != nil {
			return err
		}
		rels := make([]int32, E)
		clear(relCount)
		for e, id := range eids {
			if id < 0 || id >= t.EdgeOffsets[R] {
				return fmt.Errorf("pipeline: SetTyped: block %d edge %d has id %d, out of range [0, %d)", h, e, id, t.EdgeOffsets[R])
			}
			r := t.Relation(id)
			rels[e] = r
			relCount[r]++
		}
		ipLen := 0
		for r := 0; r < R; r++ {
			eoff[r+1] = eoff[r] + relCount[r]
			ipLen += int(numDst[t.RelDst[r]]) + 1
		}
		if tb.Src, src, err = newT(E, false); err != nil {
			return err
		}
		if tb.Dst, dst, err = newT(E, false); err != nil {
			return err
		}
		if tb.EdgeIDs, leid, err = newT(E, false); err != nil {
			return err
		}
		if tb.Indptr, ip, err = newT(ipLen, true); err != nil {
			return err
		}
		// ipBase[r]: where relation r's offsets start in ip.
		ipBase := make([]int64, R)
		for r, base := 0, int64(0); r < R; r++ {
			ipBase[r] = base
			base += numDst[t.RelDst[r]] + 1
		}
		cursor := relCount // reused: the next free slot of each relation
		copy(cursor, eoff[:R])
		for j := int64(0); j < blk.NumDst; j++ {
			dpos := blk.DstOffset + j
			drank := rank[dpos]
			a, z := indptr[j], indptr[j+1]
			if a < 0 || z < a || z > int64(E) {
				return fmt.Errorf("pipeline: SetTyped: block %d indptr is not monotone at %d", h, j)
			}
			for e := a; e < z; e++ {
				s := indices[e]
				if s < 0 || s >= int64(n) {
					return fmt.Errorf("pipeline: SetTyped: block %d edge %d has source position %d, out of range [0, %d)", h, e, s, n)
				}
				r := rels[e]
				if t.RelDst[r] != types[dpos] {
					return fmt.Errorf("pipeline: SetTyped: block %d edge %d of relation %d enters a node of type %d", h, e, r, types[dpos])
				}
				p := cursor[r]
				cursor[r]++
				src[p] = rank[s]
				dst[p] = drank
				leid[p] = eids[e] - t.EdgeOffsets[r]
				ip[ipBase[r]+drank-dstRank[types[dpos]]+1]++
			}
		}
		for r := 0; r < R; r++ {
			seg := ip[ipBase[r] : ipBase[r]+numDst[t.RelDst[r]]+1]
			for k := 1; k < len(seg); k++ {
				seg[k] += seg[k-1]
			}
		}
	}
	ok = true
	b.Typed = v
	return nil
}

// shapeLen is the element count of a 1-D tensor (-1 for another rank).
func shapeLen(t mem.Tensor) int64 {
	if len(t.Shape) != 1 {
		return -1
	}
	return t.Shape[0]
}
