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
// times (temporal sampling with time_attr naming node times): the nodes'
// times (original ids) and one seed time per positive pair (PyG's
// edge_label_time). Negative f of a side belongs to positive f % NumPos,
// as PyG lays its draws out (ceil(amount) rows of the positives).
type NodeTimes struct {
	Node  NodeTimer
	Seeds []int64
}

// NodeTimer gives the times of nodes by original id: TimeVector holds
// them all; a rank that holds its own nodes' times asks the others
// (engine/distributed). Times is called exactly twice for each side a
// batch keeps under node times, with or without ids, so that the calls of
// ranks that ask each other pair up.
type NodeTimer interface {
	// Times returns the times of the nodes ids (in range).
	Times(ids []int64) ([]int64, error)
	// Earliest returns the node of r of minimum time, the first (lowest
	// id) of them.
	Earliest(r NodeRange) (int64, error)
}

// TimeVector is every node's time, by original id.
type TimeVector []int64

// Times returns the times of ids.
func (t TimeVector) Times(ids []int64) ([]int64, error) {
	out := make([]int64, len(ids))
	for i, v := range ids {
		out[i] = t[v]
	}
	return out, nil
}

// Earliest returns the first node of r of minimum time.
func (t TimeVector) Earliest(r NodeRange) (int64, error) {
	earliest := int64(-1)
	for v := r.Lo; v < r.Lo+r.N; v++ {
		if earliest < 0 || t[v] < t[earliest] {
			earliest = v
		}
	}
	return earliest, nil
}

// validate checks t against numNodes nodes and numPos positives.
func (t *NodeTimes) validate(numNodes int64, numPos int) error {
	if v, ok := t.Node.(TimeVector); t.Node == nil || ok && int64(len(v)) < numNodes {
		return fmt.Errorf("linkpred: negatives under node times: %d node times for %d nodes", len(v), numNodes)
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
// than the seed (<=), as PyG's documentation says. The times are asked
// twice (t.Node.Times): the negatives', then every redraw of the later
// ones (a function of the stream alone, so drawn at once).
func (t *NodeTimes) keep(neg []int64, side uint64, r NodeRange, draw func(*rng.SplitMix64) int64, s Stream, threads int) error {
	first, err := t.Node.Times(neg)
	if err != nil {
		return err
	}
	p := len(t.Seeds)
	var late []int
	for f, ts := range first {
		if p > 0 && ts > t.Seeds[f%p] {
			late = append(late, f)
		}
	}
	root := s.root(tagTimed ^ side)
	redraws := make([]int64, maxRedraws*len(late))
	parallelFor(len(late), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := at(root, late[i])
			for a := range maxRedraws {
				redraws[i*maxRedraws+a] = draw(&x)
			}
		}
	})
	times, err := t.Node.Times(redraws)
	if err != nil {
		return err
	}
	earliest := int64(-1)
	for i, f := range late {
		cut, v := t.Seeds[f%p], int64(-1)
		for a := range maxRedraws {
			if times[i*maxRedraws+a] <= cut {
				v = redraws[i*maxRedraws+a]
				break
			}
		}
		if v < 0 {
			if earliest < 0 {
				if earliest, err = t.Node.Earliest(r); err != nil {
					return err
				}
			}
			v = earliest
		}
		neg[f] = v
	}
	return nil
}
