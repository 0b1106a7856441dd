package distributed

import (
	"context"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// Temporal sampling on a rank part. A part holds no times of its own (a
// partition is written from a dataset, which carries none), so the ranks
// give them after opening their parts, before opening loaders:
//
//   - node times: the time of every node of the whole graph, by original id
//     (SetNodeTime), or each rank the times of its own nodes only
//     (ShareNodeTime, a collective). A rank samples the in-edges of its
//     owned nodes, so it reads the times of the nodes it holds (owned, and
//     the sources of their in-edges): a dsp part keeps those alone, 8 bytes
//     x (owned + halo), in the order of partition.Partitioned.TimeSlot
//     (hybrid and self-reliant parts hold every node: N entries). PyG's
//     negatives under node times, which can be any node, ask their times
//     of the owners batch by batch (nodeTimer), and each node type's
//     earliest node (their fallback) is found when the times are set.
//   - edge times: by original edge id (SetEdgeTime), more entries than the
//     largest original edge id the part holds.
//
// With them, the part's loaders sample temporally exactly as the
// single-process loader over the whole dataset does with the same times.

// SetNodeTime sets the node times from the time of every node of the whole
// graph (N entries, by original id): the part keeps those of the nodes it
// holds (copied) for temporal sampling (sample.TemporalNode). Fails
// (errs.ErrState) while loaders are open on the part.
func (p *Part) SetNodeTime(t []int64) error {
	if int64(len(t)) != p.meta.NumNodes {
		return errs.Errorf(nil, "node times have %d entries, want one per node of the whole graph (%d)", len(t), p.meta.NumNodes)
	}
	slots, err := p.timeSlots()
	if err != nil {
		return err
	}
	for i, v := range slots {
		slots[i] = t[v]
	}
	ranges := p.timeRanges()
	earliest := make([]int64, len(ranges))
	for k, r := range ranges {
		earliest[k], _ = linkpred.TimeVector(t).Earliest(r)
	}
	return p.setNodeTime(slots, earliest)
}

// SetEdgeTime sets the time of every edge by original edge id (copied)
// for temporal sampling (sample.TemporalEdge): more entries than the
// largest original edge id the part holds. Fails (errs.ErrState) while
// loaders are open on the part.
func (p *Part) SetEdgeTime(t []int64) error { return p.g.SetEdgeTime(t) }

// ShareNodeTime sets the node times from the ranks' own: a collective over
// c (every rank of the partition calls it, each with the times of its
// owned nodes, OwnedNodes order). Three all-to-alls: every rank sends the
// times of its owned nodes to the ranks that keep them for the exchange
// (rank q the original ids [q*N/P, (q+1)*N/P)), with its node types'
// earliest nodes and whether its times have the right length to every
// rank; then it asks those ranks the times of the nodes it holds (ask).
// What it sends and receives is O(owned + halo). When a rank gives times
// of another length than its owned nodes, every rank fails alike (every
// rank sees it) and sets nothing.
func (p *Part) ShareNodeTime(c comm.Comm, owned []int64) error {
	if c == nil {
		return errs.Errorf(nil, "communicator is nil")
	}
	if err := p.checkComm(c); err != nil {
		return err
	}
	slots, err := p.timeSlots()
	if err != nil {
		return err
	}
	n, size, rank := p.meta.NumNodes, c.Size(), p.info.Rank
	keep := make([]int64, size+1) // the ranks' ranges of original ids
	for q := range keep {
		keep[q] = int64(q) * n / int64(size)
	}
	ranges := p.timeRanges()
	ok := len(owned) == len(p.owned)
	// To every rank: [ok, (time, id) of each type's earliest owned node
	// (id -1: none), the owned ids it keeps..., their times...].
	head := make([]int64, 1+2*len(ranges))
	send := make([]mem.Buffer, size)
	for q := range send {
		send[q] = mem.HostBuffer(mem.Bytes(head))
	}
	if ok {
		head[0] = 1
		for k, r := range ranges {
			head[1+2*k+1] = -1
			for i, v := range p.owned {
				if v >= r.Lo && v < r.Lo+r.N && (head[1+2*k+1] < 0 || owned[i] < head[1+2*k]) {
					head[1+2*k], head[1+2*k+1] = owned[i], v
				}
			}
		}
		for q := range send {
			lo, _ := slices.BinarySearch(p.owned, keep[q])
			hi, _ := slices.BinarySearch(p.owned, keep[q+1])
			m := append(slices.Clone(head), p.owned[lo:hi]...)
			send[q] = mem.HostBuffer(mem.Bytes(append(m, owned[lo:hi]...)))
		}
	}
	exchange := commExchange(c, rank)
	recv, err := exchange(context.Background(), send)
	if err != nil {
		return err
	}
	if !ok {
		return errs.Errorf(nil, "owned node times have %d entries, want one per node rank %d owns (%d)", len(owned), rank, len(p.owned))
	}
	earliest, kept, err := keptTimes(recv, ranges, keep[rank], keep[rank+1])
	if err != nil {
		return err
	}
	times, err := ask(context.Background(), exchange, size, slots, n, "time",
		func(v int64) int { return ownerOf(keep, v) },
		func(q int, v int64) (int64, error) {
			if kept == nil {
				return 0, fmt.Errorf("rank %d asked rank %d for node times, which it did not receive once each (the ranks' owned nodes are not a partition of the graph)", q, rank)
			}
			return kept[v-keep[rank]], nil
		}, nil)
	if err != nil {
		return err
	}
	return p.setNodeTime(times, earliest)
}

// keptTimes reads the first messages of ShareNodeTime: every node type's
// earliest node, and the times of original ids [lo, hi), which the ranks
// sent this rank (nil, without error, when they did not send each exactly
// once, which a partition's owned nodes rule out: this rank then fails
// when asked, and the ranks that asked it when their exchange gives up).
func keptTimes(recv []mem.Buffer, ranges []linkpred.NodeRange, lo, hi int64) (earliest, kept []int64, err error) {
	earliest = make([]int64, len(ranges))
	best := make([]int64, len(ranges))
	for k := range earliest {
		earliest[k] = -1
	}
	kept = make([]int64, hi-lo)
	seen := make([]bool, hi-lo)
	count, head := int64(0), 1+2*len(ranges)
	for q, b := range recv {
		m := mem.Int64s(b.Bytes())
		if len(m) < head || (len(m)-head)%2 != 0 || m[0] != 1 {
			return nil, nil, errs.Errorf(nil, "the ranks sent the times of their owned nodes, but rank %d gave times of another length than its owned nodes", q)
		}
		for k := range ranges {
			t, v := m[1+2*k], m[2+2*k]
			if v >= 0 && (earliest[k] < 0 || t < best[k] || t == best[k] && v < earliest[k]) {
				earliest[k], best[k] = v, t
			}
		}
		m = m[head:]
		ids, ts := m[:len(m)/2], m[len(m)/2:]
		for i, v := range ids {
			if v < lo || v >= hi || seen[v-lo] {
				return earliest, nil, nil
			}
			seen[v-lo], kept[v-lo] = true, ts[i]
		}
		count += int64(len(ids))
	}
	if count != hi-lo {
		kept = nil
	}
	return earliest, kept, nil
}

// timeSlots returns the original ids of the nodes whose times the part
// keeps (partition.Partitioned.TimeSlotIDs).
func (p *Part) timeSlots() ([]int64, error) {
	var slots []int64
	err := p.g.Use(func(in core.Internals) error {
		slots = in.Part.TimeSlotIDs()
		return nil
	})
	return slots, err
}

// timeRanges returns the node types' ranges of original ids (one range of
// every node when untyped), whose earliest nodes the part keeps with its
// node times.
func (p *Part) timeRanges() []linkpred.NodeRange {
	t := p.g.Types()
	if t == nil {
		return []linkpred.NodeRange{{N: p.meta.NumNodes}}
	}
	out := make([]linkpred.NodeRange, t.NumNodeTypes())
	for k := range out {
		out[k] = linkpred.TypeRange(t, int32(k))
	}
	return out
}

// setNodeTime sets the part's node times (by time slot) and its node
// types' earliest nodes (timeRanges order).
func (p *Part) setNodeTime(times, earliest []int64) error {
	if err := p.g.SetNodeTime(times); err != nil {
		return err
	}
	p.timeMu.Lock()
	p.earliest = earliest
	p.timeMu.Unlock()
	return nil
}

// nodeTimer is the node times of the whole graph a dsp rank's edge loader
// asks for its negatives (linkload.EdgeAsker.NodeTimes): a node's new id
// from the directory (resolve), then its time from its owner, which keeps
// its owned nodes' first (times, by time slot). Every rank makes the same
// calls for each batch (linkpred.NodeTimer), on rt's exchanges.
type nodeTimer struct {
	s   *seedEdges
	ctx context.Context
	rt  *sample.Runtime
}

// NodeTimes returns the node timer of a batch sampled on rt.
func (s *seedEdges) NodeTimes(ctx context.Context, rt *sample.Runtime) linkpred.NodeTimer {
	return nodeTimer{s: s, ctx: ctx, rt: rt}
}

// Times asks the owners the times of the nodes ids (original ids).
func (t nodeTimer) Times(ids []int64) ([]int64, error) {
	s := t.s
	internal, err := s.p.resolve(t.ctx, t.rt.Exchange, ids)
	if err != nil {
		return nil, err
	}
	lo, hi := s.offsets[s.rank], s.offsets[s.rank+1]
	return ask(t.ctx, t.rt.Exchange, len(s.offsets)-1, internal, s.numNodes, "time",
		func(v int64) int { return ownerOf(s.offsets, v) },
		func(q int, v int64) (int64, error) {
			if v < lo || v >= hi {
				return 0, fmt.Errorf("rank %d asked rank %d for the time of node %d, which it does not own", q, s.rank, v)
			}
			return s.times[v-lo], nil
		}, nil)
}

// Earliest returns the earliest node of r, a node type's range (or every
// node), found when the times were set.
func (t nodeTimer) Earliest(r linkpred.NodeRange) (int64, error) {
	if k := slices.Index(t.s.ranges, r); k >= 0 && k < len(t.s.earliest) {
		return t.s.earliest[k], nil
	}
	return 0, fmt.Errorf("no earliest node of the node range %v", r)
}

// checkTimes checks that the part holds the times a request of temporal
// kind t samples by (set by SetNodeTime, ShareNodeTime or SetEdgeTime).
func (p *Part) checkTimes(t sample.Temporal) error {
	if t == sample.TemporalNone {
		return nil
	}
	var have bool
	if err := p.g.Use(func(in core.Internals) error {
		ro := in.Runtime(0)
		have = (t == sample.TemporalNode && ro.NodeTime != nil) || (t == sample.TemporalEdge && ro.EdgeTime != nil)
		return nil
	}); err != nil {
		return err
	}
	if !have {
		what, how := "node", "SetNodeTime, or ShareNodeTime with the ranks' own nodes' times"
		if t == sample.TemporalEdge {
			what, how = "edge", "SetEdgeTime"
		}
		return errs.Errorf(errs.ErrState, "temporal sampling by %s time on a rank part needs the %s times, which a partition does not carry: set them first (%s)", what, what, how)
	}
	return nil
}
