package sample

import (
	"errors"
	"fmt"
)

// Frontier selects which nodes a hop samples neighbours for.
type Frontier int

const (
	// FrontierAll gives DGL blocks: hop h samples neighbours of ALL nodes
	// gathered so far (block h's dst nodes = every node after hop h-1).
	FrontierAll Frontier = iota
	// FrontierNew is PyG-style: hop h samples only the nodes first added in
	// hop h-1 (hop 0: the seeds).
	FrontierNew
)

// String returns "all" or "new".
func (f Frontier) String() string {
	switch f {
	case FrontierAll:
		return "all"
	case FrontierNew:
		return "new"
	}
	return fmt.Sprintf("Frontier(%d)", int(f))
}

// Options configures a Sampler.
type Options struct {
	// Fanouts holds the number of neighbours to sample per frontier node,
	// per hop, starting from the seeds (PyG order); -1 = all neighbours.
	// 0, values < -1 and an empty list are invalid.
	Fanouts []int
	// Replace samples with replacement (default: uniform without replacement).
	Replace bool
	// Frontier selects FrontierAll (DGL) or FrontierNew (PyG).
	Frontier Frontier
	// Seed is the root of every random stream.
	Seed uint64
	// Threads is the parallelism of sampling (<= 0: GOMAXPROCS), shared by
	// the in-process ranks: each rank's sample stage and append-unique use
	// max(1, Threads/ranks) goroutines. It never changes the result.
	Threads int
}

// Validate reports the first invalid option.
func (o Options) Validate() error {
	if len(o.Fanouts) == 0 {
		return errors.New("sample: fanouts is empty (want one fanout per hop)")
	}
	for i, f := range o.Fanouts {
		if f == 0 || f < -1 {
			return fmt.Errorf("sample: fanout[%d] = %d is invalid (want > 0, or -1 for all neighbours)", i, f)
		}
	}
	if o.Frontier != FrontierAll && o.Frontier != FrontierNew {
		return fmt.Errorf("sample: frontier = %d is invalid (want FrontierAll (0) or FrontierNew (1))", int(o.Frontier))
	}
	return nil
}
