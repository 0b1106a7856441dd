package linkpred

import (
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/rng"
)

// NodeWeights draws node ids with probability proportional to a weight per
// node (PyG's NegativeSampling weight, which torch.multinomial samples with
// replacement), in O(1) per draw by Vose's alias method. Build it once per
// weight vector; it is read-only afterwards and safe for concurrent use.
type NodeWeights struct {
	prob  []float64 // probability of keeping column i rather than alias[i]
	alias []int64
}

// NewNodeWeights builds the table of w (one weight per node). Weights must
// be finite and >= 0 with a positive sum; the first bad one is named.
func NewNodeWeights(w []float64) (*NodeWeights, error) {
	if len(w) == 0 {
		return nil, fmt.Errorf("linkpred: node weights are empty")
	}
	var sum float64
	for i, x := range w {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("linkpred: node weight[%d] = %v, must be finite and >= 0", i, x)
		}
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("linkpred: node weights sum to %v, must be positive and finite", sum)
	}
	n := len(w)
	t := &NodeWeights{prob: make([]float64, n), alias: make([]int64, n)}
	scaled := make([]float64, n)
	small := make([]int, 0, n)
	large := make([]int, 0, n)
	for i, x := range w {
		scaled[i] = x / sum * float64(n)
		t.alias[i] = int64(i)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		t.prob[s] = scaled[s]
		t.alias[s] = int64(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left is 1 up to rounding.
	for _, i := range large {
		t.prob[i] = 1
	}
	for _, i := range small {
		if w[i] > 0 {
			t.prob[i] = 1
		} else {
			// A zero weight left over by rounding: never keep it.
			t.prob[i] = 0
			t.alias[i] = firstPositive(w)
		}
	}
	return t, nil
}

func firstPositive(w []float64) int64 {
	for i, x := range w {
		if x > 0 {
			return int64(i)
		}
	}
	return 0
}

// Len returns the number of nodes the table covers.
func (t *NodeWeights) Len() int64 {
	if t == nil {
		return 0
	}
	return int64(len(t.prob))
}

// check validates a sampler's node count against the table (t may be nil:
// uniform draws).
func (t *NodeWeights) check(fn string, numNodes int64) error {
	if err := checkNumNodes(fn, numNodes); err != nil {
		return err
	}
	if t != nil && t.Len() != numNodes {
		return fmt.Errorf("linkpred: %s: the weight vector has %d entries for %d nodes", fn, t.Len(), numNodes)
	}
	return nil
}

// draw returns one node id: uniform in [0, numNodes) when t is nil,
// weighted otherwise.
func (t *NodeWeights) draw(r *rng.SplitMix64, numNodes int64) int64 {
	if t == nil {
		return int64(r.Below(uint64(numNodes)))
	}
	c := r.Below(uint64(len(t.prob)))
	if r.Unit() < t.prob[c] {
		return int64(c)
	}
	return t.alias[c]
}
