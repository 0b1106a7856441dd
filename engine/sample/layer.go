package sample

import (
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
)

// Layer-wise sampling (DSP §4.2, Eq. 2). The requesting rank draws, before
// the shuffle, how many neighbours each frontier node samples; only the
// nodes with a positive count become tasks, and each carries its count to
// its owner. The draw uses W_v (call.nodeW), a per-node array built on
// first use and shared by the in-process ranks (a multi-process deployment would
// replicate it, like the degrees), and one stream keyed by (Request.Seed,
// batch key, hop, layerStream), so it is a function of the frontier in its
// (layout-independent) order only.

// layerStream is the node field of the layer draw's stream state: original
// node ids are below 2^63, so it never collides with a task's stream.
const layerStream = 1<<63 | 1

// layerScratch is one rank's memory for the layer draw.
type layerScratch struct {
	pre       []float64
	cnt       []int64
	tasks     []int64
	fans      []int64
	active    []int32
	subIndptr []int64
	heap      []keyPos
}

// nodeWeights computes W_v for every (internal) node.
func (s *call) nodeWeights() []float64 {
	n := int(s.g.NumNodes)
	w := make([]float64, n)
	par.For(n, 4096, s.threads, func(_, a, b int) {
		for v := a; v < b; v++ {
			if s.filtered {
				w[v] = s.totalWeight(int64(v))
			} else {
				w[v] = float64(s.g.InDegree(int64(v)))
			}
		}
	})
	return w
}

// layerDraw returns the hop's tasks: the frontier nodes with a positive
// count, in frontier order, their counts (fans; -1 = all neighbours) and
// their indices in the frontier (active). The slices live in ws.
func (s *call) layerDraw(ws *workspace, frontier []int64, key uint64, hop, n int) (tasks, fans []int64, active []int32) {
	lw := &ws.lw
	tasks, fans, active = lw.tasks[:0], lw.fans[:0], lw.active[:0]
	defer func() { lw.tasks, lw.fans, lw.active = tasks, fans, active }()
	if len(frontier) == 0 {
		return
	}
	if n == 0 { // fan-out 0: no task, an empty block
		return
	}
	W := s.nodeW
	if n < 0 { // every neighbour of every frontier node
		for i, v := range frontier {
			if W[v] > 0 {
				tasks = append(tasks, v)
				fans = append(fans, -1)
				active = append(active, int32(i))
			}
		}
		return
	}
	cnt := grow64(lw.cnt, len(frontier))
	lw.cnt = cnt
	clear(cnt)
	r := taskStream(s.seed, key, uint64(hop), layerStream)
	if s.req.LayerWithoutReplacement {
		// min(n, #positive) distinct nodes by exponential keys Exp(1)/W_v.
		sk := smallestKeys{h: lw.heap[:0], k: n}
		for i, v := range frontier {
			if W[v] > 0 {
				sk.push(keyPos{r.Exp1() / W[v], int64(i)})
			}
		}
		lw.heap = sk.h
		for _, e := range sk.h {
			cnt[e.i] = 1
		}
	} else {
		pre := lw.pre[:0]
		var t float64
		for _, v := range frontier {
			t += W[v]
			pre = append(pre, t)
		}
		lw.pre = pre
		if t > 0 {
			for range n {
				cnt[searchPrefix(pre, r.Unit()*t)]++
			}
		}
	}
	for i, c := range cnt {
		if c > 0 {
			tasks = append(tasks, frontier[i])
			fans = append(fans, c)
			active = append(active, int32(i))
		}
	}
	return
}

// mergeLayer merges the answers to the layer draw's tasks and spreads the
// block's rows over the whole frontier (nodes that drew nothing get empty
// rows).
func (s *call) mergeLayer(ws *workspace, frontier, tasks []int64, active []int32, owners []int32, recv []mem.Buffer, nodes *[]int64, hop int, reuse *Block) (Block, error) {
	sub := *reuse
	sub.Indptr = ws.lw.subIndptr
	block, err := s.merge(ws, tasks, owners, recv, nodes, hop, &sub, nil)
	if err != nil {
		return Block{}, err
	}
	ws.lw.subIndptr = block.Indptr
	full := grow64(reuse.Indptr, len(frontier)+1)
	full[0] = 0
	k := 0
	for i := range frontier {
		full[i+1] = full[i]
		if k < len(active) && int(active[k]) == i {
			full[i+1] += block.Indptr[k+1] - block.Indptr[k]
			k++
		}
	}
	block.Indptr = full
	block.NumDst = int64(len(frontier))
	return block, nil
}
