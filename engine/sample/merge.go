package sample

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
)

// Merges whose hop sampled at least parallelMergeMin neighbours run the
// parallel append-unique; mergeGrain is its chunk size (variables so that
// tests can force the parallel path on small graphs).
var (
	parallelMergeMin = 1 << 15
	mergeGrain       = 1 << 14
	// parallelDenseMin and parallelDenseThreads gate the parallel
	// append-unique on the dense table, whose sequential loop is several
	// times faster than the hash table's: with 2 threads the parallel one
	// (four passes) is slower even at 1M neighbours per hop, so it needs
	// both a large hop and enough threads.
	parallelDenseMin     = 1 << 17
	parallelDenseThreads = 4
)

// answer is one owner's reshuffle message, with the merge's cursors.
type answer struct {
	counts, nbrs, eids []int64
	task, off          int64 // cursors
}

// merge puts the sampled lists back into frontier order and builds the hop's
// block straight in CSC (FastSample Algorithm 1): Indptr over the frontier,
// Indices through append-unique on the rank's node table (nodes already in
// Nodes keep their positions, new ones are appended in order of first
// appearance), EdgeIDs copied. The block's slices reuse reuse's memory
// (a recycled result's block; zero for fresh slices). With subs (Disjoint:
// subs[i] is frontier[i]'s subgraph), the nodes are keys sub*n + v and a
// neighbour joins its destination's subgraph.
func (s *call) merge(ws *workspace, frontier []int64, owners []int32, recv []mem.Buffer, nodes *[]int64, hop int, reuse *Block, subs []int64) (Block, error) {
	ans := ws.ans
	sent := ws.sent
	clear(sent)
	if owners == nil {
		sent[0] = int64(len(frontier))
	} else {
		for _, o := range owners {
			sent[o]++
		}
	}
	var total int64
	for o, b := range recv {
		m, err := messageInt64s(b)
		if err != nil {
			return Block{}, fmt.Errorf("sample: hop %d: from rank %d: %w", hop, o, err)
		}
		n := sent[o]
		if int64(len(m)) < n || (int64(len(m))-n)%2 != 0 {
			return Block{}, fmt.Errorf("sample: hop %d: rank %d answered %d tasks with %d values", hop, o, n, len(m))
		}
		ml := (int64(len(m)) - n) / 2
		a := answer{counts: m[:n], nbrs: m[n : n+ml], eids: m[n+ml:]}
		var sum int64
		for _, c := range a.counts {
			if c < 0 {
				return Block{}, fmt.Errorf("sample: hop %d: rank %d answered a negative count %d", hop, o, c)
			}
			sum += c
		}
		if sum != ml {
			return Block{}, fmt.Errorf("sample: hop %d: rank %d answered counts summing to %d with %d neighbours", hop, o, sum, ml)
		}
		ans[o] = a
		total += ml
	}
	if int64(len(*nodes))+total > math.MaxInt32 {
		return Block{}, fmt.Errorf("sample: hop %d: the sample would exceed %d nodes", hop, math.MaxInt32)
	}

	// Indptr, and the sampled neighbours and edge ids in frontier order.
	nd := len(frontier)
	indptr := grow64(reuse.Indptr, nd+1)
	indptr[0] = 0
	eids := grow64(reuse.EdgeIDs, int(total))
	var nbrs []int64
	if owners == nil {
		a := ans[0]
		for i, c := range a.counts {
			indptr[i+1] = indptr[i] + c
		}
		nbrs = a.nbrs
		copy(eids, a.eids)
	} else {
		nbrs = grow64(ws.nbrs, int(total))
		ws.nbrs = nbrs
		var k int64
		for i := 0; i < nd; i++ {
			a := &ans[owners[i]]
			c := a.counts[a.task]
			a.task++
			copy(nbrs[k:k+c], a.nbrs[a.off:a.off+c])
			copy(eids[k:k+c], a.eids[a.off:a.off+c])
			a.off += c
			k += c
			indptr[i+1] = k
		}
	}
	clear(ans) // drop the references to the messages

	indices := grow64(reuse.Indices, int(total))
	var err error
	switch {
	case subs != nil:
		err = s.appendUniqueDisjoint(ws, nbrs, indptr, subs, indices, nodes, hop)
	case s.dense && total >= int64(parallelDenseMin) && s.rankThreads() >= parallelDenseThreads:
		err = s.appendUniqueParallelDense(ws, nbrs, indices, nodes, hop)
	case s.dense:
		err = s.appendUniqueDense(ws, nbrs, indices, nodes, hop)
	case total >= int64(parallelMergeMin) && s.rankThreads() > 1:
		err = s.appendUniqueParallel(ws, nbrs, indices, nodes, hop)
	default:
		err = s.appendUnique(ws, nbrs, indices, nodes, hop)
	}
	if err != nil {
		return Block{}, err
	}
	return Block{
		Indptr:  indptr,
		Indices: indices,
		EdgeIDs: eids,
		NumDst:  int64(nd),
		NumSrc:  int64(len(*nodes)),
	}, nil
}

// appendUniqueDisjoint is appendUnique for Disjoint batches: the
// neighbours of frontier row i (nbrs[indptr[i]:indptr[i+1]]) are keyed
// subs[i]*n + u in the hash table.
func (s *call) appendUniqueDisjoint(ws *workspace, nbrs, indptr, subs, indices []int64, nodes *[]int64, hop int) error {
	n := s.g.NumNodes
	ns := *nodes
	for i, sub := range subs {
		base := sub * n
		for k := indptr[i]; k < indptr[i+1]; k++ {
			u := nbrs[k]
			if uint64(u) >= uint64(n) {
				return s.badNode(hop, u)
			}
			pos, isNew := ws.table.insert(base+u, int32(len(ns)))
			if isNew {
				ns = append(ns, base+u)
			}
			indices[k] = int64(pos)
		}
	}
	*nodes = ns
	return nil
}

func (s *call) badNode(hop int, u int64) error {
	return fmt.Errorf("sample: hop %d: a rank answered node %d, out of range [0, %d)", hop, u, s.g.NumNodes)
}

// appendUnique sets indices[k] to the position of nbrs[k] in *nodes,
// appending the nodes not yet there in order of first appearance.
func (s *call) appendUnique(ws *workspace, nbrs, indices []int64, nodes *[]int64, hop int) error {
	n := s.g.NumNodes
	ns := *nodes
	ns = slices.Grow(ns, int(min(int64(len(nbrs)), n-int64(len(ns))))) // at most n nodes
	for k, u := range nbrs {
		if uint64(u) >= uint64(n) {
			return s.badNode(hop, u)
		}
		if k%stopEvery == stopEvery-1 && s.stopped() {
			return s.stopErr(fmt.Sprintf("hop %d", hop))
		}
		pos, isNew := ws.table.insert(u, int32(len(ns)))
		if isNew {
			ns = append(ns, u)
		}
		indices[k] = int64(pos)
	}
	*nodes = ns
	return nil
}

// appendUniqueParallel computes what appendUnique does, with the same result,
// in parallel:
//
//  1. bucket the positions k of nbrs by shard (stable counting sort);
//  2. per shard, one goroutine inserts its keys in increasing k: a key met
//     for the first time gets the provisional position -(k+1) and k is
//     flagged as a first appearance; otherwise indices[k] takes the stored
//     (final or provisional) position;
//  3. a prefix sum over the flags in k order numbers the new nodes in order
//     of first appearance; the new nodes are written and their slots get
//     their final positions;
//  4. provisional indices are resolved.
func (s *call) appendUniqueParallel(ws *workspace, nbrs, indices []int64, nodes *[]int64, hop int) error {
	return s.appendUniqueShards(ws, nbrs, indices, nodes, hop, nil)
}

// appendUniqueParallelDense is appendUniqueParallel on ws's dense table,
// whose entries play the hash slots' part (a provisional position -(k+1) is
// stored as is, a final position p as p+1); keys are still bucketed by
// shardOf, which spreads them evenly.
func (s *call) appendUniqueParallelDense(ws *workspace, nbrs, indices []int64, nodes *[]int64, hop int) error {
	return s.appendUniqueShards(ws, nbrs, indices, nodes, hop, ws.denseTable(s.g.NumNodes))
}

// appendUniqueShards is appendUniqueParallel on the hash table (dense nil)
// or on the dense table dense.
func (s *call) appendUniqueShards(ws *workspace, nbrs, indices []int64, nodes *[]int64, hop int, dense []int32) error {
	total := len(nbrs)
	threads := s.rankThreads()
	grain := mergeGrain
	chunks := (total + grain - 1) / grain
	ws.order = grow32(ws.order, total)
	ws.rank = grow32(ws.rank, total)
	if dense == nil {
		ws.slotOf = grow32(ws.slotOf, total)
	}
	order, rank, slotOf := ws.order, ws.rank, ws.slotOf
	n := s.g.NumNodes

	// 1. Counting sort of k by shard.
	counts := make([]int32, chunks*numShards)
	var errMu sync.Mutex
	var firstBad = total
	par.For(chunks, 1, threads, func(_, c0, c1 int) {
		for c := c0; c < c1; c++ {
			cnt := counts[c*numShards : (c+1)*numShards]
			lo, hi := c*grain, min((c+1)*grain, total)
			for k := lo; k < hi; k++ {
				u := nbrs[k]
				if uint64(u) >= uint64(n) {
					errMu.Lock()
					firstBad = min(firstBad, k)
					errMu.Unlock()
					return
				}
				cnt[shardOf(u)]++
			}
		}
	})
	if firstBad < total {
		return s.badNode(hop, nbrs[firstBad])
	}
	var shardStart [numShards + 1]int32
	var run int32
	for sh := 0; sh < numShards; sh++ {
		shardStart[sh] = run
		for c := 0; c < chunks; c++ {
			x := counts[c*numShards+sh]
			counts[c*numShards+sh] = run
			run += x
		}
	}
	shardStart[numShards] = run
	par.For(chunks, 1, threads, func(_, c0, c1 int) {
		for c := c0; c < c1; c++ {
			off := counts[c*numShards : (c+1)*numShards]
			lo, hi := c*grain, min((c+1)*grain, total)
			for k := lo; k < hi; k++ {
				sh := shardOf(nbrs[k])
				order[off[sh]] = int32(k)
				off[sh]++
			}
		}
	})

	// 2. Per-shard inserts. rank[k] is 1 for a first appearance, else 0.
	par.For(numShards, 1, threads, func(_, s0, s1 int) {
		if dense != nil {
			for _, k := range order[shardStart[s0]:shardStart[s1]] {
				u := nbrs[k]
				switch p := dense[u]; {
				case p == 0:
					dense[u] = int32(-(k + 1))
					rank[k] = 1
					indices[k] = int64(-(k + 1))
				case p > 0:
					rank[k] = 0
					indices[k] = int64(p - 1)
				default:
					rank[k] = 0
					indices[k] = int64(p)
				}
			}
			return
		}
		for sh := s0; sh < s1; sh++ {
			ks := order[shardStart[sh]:shardStart[sh+1]]
			t := &ws.table[sh]
			t.reserve(len(ks))
			for _, k := range ks {
				i, pos, isNew := t.insert(nbrs[k], -(k + 1))
				if isNew {
					rank[k], slotOf[k] = 1, int32(i)
				} else {
					rank[k] = 0
				}
				indices[k] = int64(pos)
			}
		}
	})

	// 3. Number the first appearances in k order.
	sums := make([]int32, chunks+1)
	par.For(chunks, 1, threads, func(_, c0, c1 int) {
		for c := c0; c < c1; c++ {
			var x int32
			for _, f := range rank[c*grain : min((c+1)*grain, total)] {
				x += f
			}
			sums[c+1] = x
		}
	})
	for c := 0; c < chunks; c++ {
		sums[c+1] += sums[c]
	}
	before := len(*nodes)
	ns := slices.Grow(*nodes, int(sums[chunks]))[:before+int(sums[chunks])]
	par.For(chunks, 1, threads, func(_, c0, c1 int) {
		for c := c0; c < c1; c++ {
			next := int32(before) + sums[c]
			for k := c * grain; k < min((c+1)*grain, total); k++ {
				if rank[k] == 0 {
					continue
				}
				u := nbrs[k]
				ns[next] = u
				if dense != nil {
					dense[u] = next + 1 // distinct entries
				} else {
					ws.table[shardOf(u)].slots[slotOf[k]].pos = next // distinct slots
				}
				rank[k] = next
				next++
			}
		}
	})

	// 4. Resolve provisional positions -(f+1) to the final position of f.
	par.For(chunks, 1, threads, func(_, c0, c1 int) {
		for k := c0 * grain; k < min(c1*grain, total); k++ {
			if p := indices[k]; p < 0 {
				indices[k] = int64(rank[-(p + 1)])
			}
		}
	})
	*nodes = ns
	return nil
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// appendUniqueDense is appendUnique on ws's dense table, in two passes. The
// first only reads each neighbour's entry (range-checking it): its loads
// are independent, so on a large table the core keeps many of its cache
// misses in flight. The second goes through the neighbours in order: those
// already present (the entry read was set) take their position; the others
// look their entry up again, since an earlier neighbour of this hop may
// have just added the node, and are appended if still absent.
func (s *call) appendUniqueDense(ws *workspace, nbrs, indices []int64, nodes *[]int64, hop int) error {
	d := ws.denseTable(s.g.NumNodes)
	indices = indices[:len(nbrs)]
	for k, u := range nbrs {
		if uint64(u) >= uint64(len(d)) {
			return s.badNode(hop, u)
		}
		indices[k] = int64(d[u])
	}
	ns := *nodes
	for k, u := range nbrs {
		if k%stopEvery == stopEvery-1 && s.stopped() {
			return s.stopErr(fmt.Sprintf("hop %d", hop)) // runRank clears the dense table
		}
		if p := indices[k]; p != 0 {
			indices[k] = p - 1
			continue
		}
		p := d[u]
		if p == 0 {
			ns = append(ns, u)
			p = int32(len(ns))
			d[u] = p
		}
		indices[k] = int64(p - 1)
	}
	*nodes = ns
	return nil
}
