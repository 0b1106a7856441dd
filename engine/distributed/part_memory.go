package distributed

import (
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// Memory is what a rank's part holds, in bytes by what it is for (the
// memory plan of Part.Memory), beside the nodes it counts them by.
type Memory struct {
	// Owned and Halo are the rank's nodes: those it owns and the others
	// its folder lists (dsp: the sources of its in-edges owned elsewhere;
	// hybrid: every other node). Nodes is the whole graph's; Ranks P.
	Owned, Halo, Nodes int64
	Ranks              int
	// Topology: the row offsets, sources, edge ids and weights held.
	Topology int64
	// NodeData: the rows of the store (the owned rows of dsp and hybrid,
	// whose features are mapped from feat.npy and paged in where read).
	NodeData int64
	// IDs: the owned nodes' original ids and the P+1 range offsets.
	IDs int64
	// Times: node and edge times, when set (N entries for node times).
	Times int64
	// Mapped: the relabelling maps mapped from disk (2 x 8 bytes x N of
	// address space; resident only where read, as clean file pages).
	Mapped int64
}

// Resident returns what the part holds in memory: everything but Mapped.
func (m Memory) Resident() int64 { return m.Topology + m.NodeData + m.IDs + m.Times }

// Memory returns the part's memory plan (see Memory): what its structures
// hold, not what the process measures (the Go heap's slack, the loaders'
// buffers and the mapped pages read so far come on top).
func (p *Part) Memory() (Memory, error) {
	m := Memory{Owned: p.info.NumOwned, Halo: p.info.NumNodes - p.info.NumOwned, Nodes: p.meta.NumNodes, Ranks: p.meta.Parts}
	err := p.g.Use(func(in core.Internals) error {
		m.Topology = cscBytes(in.Part.Graph)
		for _, name := range in.Store.Names() {
			if t, ok := in.Store.Get(name); ok {
				m.NodeData += int64(len(t.Data))
			}
		}
		m.IDs = 8*int64(len(p.owned)) + 8*int64(len(in.Part.Offsets))
		ro := in.Runtime(0)
		m.Times = 8 * int64(len(ro.NodeTime)+len(ro.EdgeTime))
		if p.layout != rankpart.LayoutSelfReliant && in.Part.NewToOld != nil { // mapped from disk
			m.Mapped = 8 * int64(len(in.Part.NewToOld)+len(in.Part.OldToNew))
		} else {
			m.IDs += 8 * int64(len(in.Part.NewToOld)+len(in.Part.OldToNew))
		}
		if p.localRow != nil {
			m.IDs += 8 * int64(len(p.localRow))
		}
		return nil
	})
	return m, err
}

// cscBytes returns the bytes of g's arrays.
func cscBytes(g *graph.CSC) int64 {
	return 8*int64(len(g.Indptr)+len(g.Indices)+len(g.EdgeIDs)) + 4*int64(len(g.Indices32)+len(g.Weights))
}
