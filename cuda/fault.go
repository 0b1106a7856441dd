package cuda

import (
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// FaultKinds are the deliberately faulty launches Fault makes.
var FaultKinds = []string{"node", "launch"}

// Fault makes a deliberately faulty launch on dev, for the tests of the
// error path, and returns the error graphferry's checks reported for it
// (reported); err is a failure to set the launch up. A nil reported error
// means a check did not fire.
//
//   - "node": gf_count over a frontier holding a node outside a 4-node
//     graph, which the kernel's device-side check reports (the host's seed
//     checks are bypassed on purpose);
//   - "launch": gf_count with 2048 threads a block, which the driver
//     refuses.
//
// Neither is a CUDA fault: the context stays usable afterwards, which
// tests/gpu checks by running PyTorch after it.
func Fault(dev Device, kind string) (reported, err error) {
	g, err := graph.FromCSC(4, []int64{0, 1, 2, 3, 4}, []int64{1, 2, 3, 0}, nil, nil)
	if err != nil {
		return nil, err
	}
	s, err := NewSampler(dev, &partition.Partitioned{Graph: g.Wide(), Offsets: []int64{0, 4}}, sample.Request{Fanouts: []int{2}}, SamplerOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	d := &devBatch{m: batchMem{pool: s.pool}}
	defer d.m.release()
	// The frontier nodes[0:*hi) = {0, 2^40}, its counts.
	buf, err := d.m.get(4 * 8)
	if err != nil {
		return nil, err
	}
	if err := s.st.CopyIn(buf, int64Bytes([]int64{0, 1 << 40, 2})); err != nil {
		return nil, err
	}
	args := []uint64{uint64(s.gs), uint64(buf), 0, uint64(buf + 16), 2, uint64(buf + 24)}
	switch kind {
	case "node":
		if err := launch(s.st, "gf_count", 2, args...); err != nil {
			return nil, err
		}
		meta, err := s.readMeta(d)
		if err != nil {
			return nil, err
		}
		return s.status(meta), nil
	case "launch":
		reported = s.st.Launch("gf_count", 1, 2048, args...)
		if reported != nil {
			reported = fmt.Errorf("cuda: launching gf_count: %w", reported)
		}
		return reported, s.st.Sync()
	}
	return nil, errors.New("cuda: Fault: unknown kind " + fmt.Sprintf("%q", kind) + " (node, launch)")
}
