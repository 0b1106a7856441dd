package distributed

import (
	"context"
	"fmt"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// Temporal sampling on a rank part. A part holds no times of its own (a
// partition is written from a dataset, which carries none), so the ranks
// give them after opening their parts, before opening loaders:
//
//   - node times: the time of every node of the whole graph, by original id
//     (SetNodeTime), or each rank the times of its own nodes only
//     (ShareNodeTime, a collective: one all-to-all assembles the whole
//     vector on every rank). A rank samples the in-edges of its nodes, but
//     the sources it keeps or drops can be any node, so every rank needs
//     every node's time: O(N) per rank, as the id maps already are.
//   - edge times: by original edge id (SetEdgeTime), more entries than the
//     largest original edge id the part holds.
//
// With them, the part's loaders sample temporally exactly as the
// single-process loader over the whole dataset does with the same times.

// SetNodeTime sets the time of every node of the whole graph (N entries,
// by original id; copied) for temporal sampling (sample.TemporalNode).
// Fails (errs.ErrState) while loaders are open on the part.
func (p *Part) SetNodeTime(t []int64) error {
	if int64(len(t)) != p.meta.NumNodes {
		return errs.Errorf(nil, "node times have %d entries, want one per node of the whole graph (%d)", len(t), p.meta.NumNodes)
	}
	return p.g.SetNodeTime(t)
}

// SetEdgeTime sets the time of every edge by original edge id (copied)
// for temporal sampling (sample.TemporalEdge): more entries than the
// largest original edge id the part holds. Fails (errs.ErrState) while
// loaders are open on the part.
func (p *Part) SetEdgeTime(t []int64) error { return p.g.SetEdgeTime(t) }

// ShareNodeTime sets the node times of the whole graph from the ranks'
// own: a collective over c (every rank of the partition calls it, each with
// the times of its owned nodes, OwnedNodes order). One all-to-all sends
// every rank's owned ids and times to every rank; the vector is complete
// when every node of the graph was sent exactly once, else the call fails
// on every rank alike (the same messages reach all) and sets nothing.
func (p *Part) ShareNodeTime(c comm.Comm, owned []int64) error {
	if c == nil {
		return errs.Errorf(nil, "communicator is nil")
	}
	if err := p.checkComm(c); err != nil {
		return err
	}
	if len(owned) != len(p.owned) {
		// Sent anyway (as an empty message), so that the others fail too
		// instead of waiting for this rank.
		owned = nil
	}
	msg := make([]int64, 0, 2*len(owned))
	if owned != nil {
		msg = append(msg, p.owned...)
		msg = append(msg, owned...)
	}
	send := make([]mem.Buffer, c.Size())
	for j := range send {
		send[j] = mem.HostBuffer(mem.Bytes(msg))
	}
	recv, err := c.AllToAll(context.Background(), p.info.Rank, send, mem.NoStream)
	if err != nil {
		return err
	}
	if owned == nil {
		return errs.Errorf(nil, "owned node times have %d entries, want one per node rank %d owns (%d)", len(msg)/2, p.info.Rank, len(p.owned))
	}
	full, err := assembleTimes(p.meta.NumNodes, recv)
	if err != nil {
		return err
	}
	return p.g.SetNodeTime(full)
}

// assembleTimes puts the (ids, times) messages of the ranks into one
// vector of n times by id, checking that every id arrives exactly once.
func assembleTimes(n int64, recv []mem.Buffer) ([]int64, error) {
	full := make([]int64, n)
	seen := make([]bool, n)
	var count int64
	for q, b := range recv {
		raw := b.Bytes()
		if len(raw)%16 != 0 {
			return nil, fmt.Errorf("rank %d sent %d bytes of node times (want 16 a node)", q, len(raw))
		}
		if len(raw) == 0 {
			continue
		}
		m := mem.Int64s(raw)
		k := len(m) / 2
		ids, ts := m[:k], m[k:]
		for i, v := range ids {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("rank %d sent the time of node %d, outside [0, %d)", q, v, n)
			}
			if seen[v] {
				return nil, fmt.Errorf("the time of node %d arrived twice (rank %d's is the second)", v, q)
			}
			seen[v] = true
			full[v] = ts[i]
		}
		count += int64(k)
	}
	if count != n {
		return nil, errs.Errorf(nil, "the ranks sent the times of %d nodes, want every node of the graph (%d): a rank gave times of another length than its owned nodes", count, n)
	}
	return full, nil
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
