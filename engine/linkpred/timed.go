package linkpred

import (
	"fmt"

	"github.com/graphferry/graphferry/engine/rng"
)

// tagTimed keeps the redraws of negatives under node times apart from the
// first draws of every sampler.
const tagTimed uint64 = 0x6e65672d74696d65 // "neg-time"

// maxRedraws is how many times a negative later than its seed is drawn
// again before it falls back to the earliest node, as PyG's neg_sample.
const maxRedraws = 5

// NodeTimes is what PyG's neg_sample needs to keep negatives under node
// times (temporal sampling with time_attr naming node times): the time of
// every node (original ids) and one seed time per positive pair (PyG's
// edge_label_time). Negative f of a side belongs to positive f % NumPos,
// as PyG lays its draws out (ceil(amount) rows of the positives).
type NodeTimes struct {
	Node  []int64
	Seeds []int64
}

// validate checks t against numNodes nodes and numPos positives.
func (t *NodeTimes) validate(numNodes int64, numPos int) error {
	if int64(len(t.Node)) < numNodes {
		return fmt.Errorf("linkpred: negatives under node times: %d node times for %d nodes", len(t.Node), numNodes)
	}
	if len(t.Seeds) != numPos {
		return fmt.Errorf("linkpred: negatives under node times: %d seed times for %d positive pairs", len(t.Seeds), numPos)
	}
	return nil
}

// keep replaces every negative in neg (one side's draws, side 0 sources, 1
// destinations) whose node time is later than its positive's seed time, as
// PyG's neg_sample does: it is drawn again with draw (up to maxRedraws
// times, from stream (Seed, Key, side, f)) and, when every redraw is later
// too, replaced by the earliest node of r (the first of minimum time,
// PyG's node_time.argmin() over the side's node type). PyG checks its
// redraws with >= (one quirk); every check here keeps a node not later
// than the seed (<=), as PyG's documentation says.
func (t *NodeTimes) keep(neg []int64, side uint64, r NodeRange, draw func(*rng.SplitMix64) int64, s Stream, threads int) {
	p := len(t.Seeds)
	if p == 0 || len(neg) == 0 {
		return
	}
	root := s.root(tagTimed ^ side)
	earliest := int64(-1)
	for v := r.Lo; v < r.Lo+r.N; v++ {
		if earliest < 0 || t.Node[v] < t.Node[earliest] {
			earliest = v
		}
	}
	parallelFor(len(neg), threads, func(lo, hi int) {
		for f := lo; f < hi; f++ {
			cut := t.Seeds[f%p]
			if t.Node[neg[f]] <= cut {
				continue
			}
			x := at(root, f)
			v := earliest
			for a := 0; a < maxRedraws; a++ {
				if u := draw(&x); t.Node[u] <= cut {
					v = u
					break
				}
			}
			neg[f] = v
		}
	})
}
