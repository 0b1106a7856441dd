package sample

import "slices"

// Block is one hop's sampled bipartite graph in CSC form: for the i-th dst
// node, its sampled in-neighbours are Indices[Indptr[i]:Indptr[i+1]].
type Block struct {
	Indptr  []int64 // len NumDst+1
	Indices []int64 // positions into Result.Nodes (the block's src nodes are Nodes[0:NumSrc])
	EdgeIDs []int64 // original edge ids, same positions as Indices
	// dst nodes are Nodes[DstOffset : DstOffset+NumDst]
	NumDst, NumSrc, DstOffset int64
}

// Result is the sample of one batch.
type Result struct {
	// Nodes holds internal (renumbered) node ids: the seeds first in the
	// given order, then each hop's new nodes in order of first appearance
	// (append-unique).
	Nodes []int64
	// HopCounts has L+1 entries: HopCounts[0] = len(seeds), HopCounts[h+1] =
	// nodes first added in hop h.
	HopCounts []int64
	// Blocks[h] is hop h (Blocks[0] samples the seeds' neighbours).
	Blocks []Block
	// Batch is set for Disjoint requests only: Batch[i] is the position
	// (in the batch's seeds) of the seed whose subgraph Nodes[i] belongs
	// to.
	Batch []int64
}

// Recycle hands results that the caller no longer uses back to rt: later
// batches may reuse their memory. Nothing of a recycled result (nor any
// slice taken from it) may be used afterwards. Recycling is optional;
// results that are not recycled are left to the garbage collector.
func (s *Runtime) Recycle(results ...*Result) {
	if s == nil {
		return
	}
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	for _, r := range results {
		if r == nil || len(s.pool) >= maxPooled || slices.Contains(s.pool, r) {
			continue
		}
		s.pool = append(s.pool, r)
	}
}

// maxPooled bounds the number of recycled results a Runtime keeps.
const maxPooled = 16

func (s *Runtime) takeResult() *Result {
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	n := len(s.pool)
	if n == 0 {
		return nil
	}
	r := s.pool[n-1]
	s.pool[n-1] = nil
	s.pool = s.pool[:n-1]
	return r
}
