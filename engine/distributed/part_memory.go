package distributed

import (
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/graph"
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
	// IDs: the original ids of the owned nodes (and dsp: of the halo by
	// new id), the P+1 range offsets, the rank's directory slice (N/P new
	// ids by original id), and hybrid's two whole maps (N entries each).
	IDs int64
	// Times: node and edge times, when set (node times: dsp, one per
	// owned and halo node; hybrid and self-reliant, one per node).
	Times int64
}

// Resident returns what the part holds in memory.
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
		m.IDs = 8 * int64(len(in.Part.Offsets)+len(p.directory)+len(in.Part.NewToOld)+len(in.Part.OldToNew))
		if r := in.Part.Ranked; r != nil {
			m.IDs += r.Bytes() // the owned nodes' ids among them
		} else {
			m.IDs += 8 * int64(len(p.owned))
		}
		ro := in.Runtime(0)
		m.Times = 8 * int64(len(ro.NodeTime)+len(ro.EdgeTime))
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
