package distributed

import (
	"context"
	"fmt"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// OpenEdgeLoader opens one rank's edge loader (link prediction: DGL's
// as_edge_prediction_sampler, PyG's LinkNeighborLoader) of a group of
// processes that sample together, as OpenLoader opens a node loader: every
// rank opens it with the same seed edges or pairs (items) and options on
// the same graph, partitioned into c.Size() patches (rank r owns patch r
// for sampling); topology, node and edge data are replicated.
//
// The epoch's batches are those of the single-process edge loader
// (core.Graph.OpenEdgeLoader) with the same items and options, bit for
// bit (the same shuffle, batch keys, negatives, pairs and samples), dealt
// out round-robin with padding as OpenLoader deals them: rank r gets
// batches r, r+size, ...; every rank ceil(G/size). Negatives are drawn
// from the same streams as in one process. Batches that exclude edges of
// their own (DGL's exclude "self" or "reverse_id", global edge ids) are
// sampled in turns within a round (linkload.Source.MakeGroup), since an
// owner answers every rank's tasks under its own request; the others are
// sampled by every rank at once.
//
// On a typed graph (core.Graph.SetTypes, the same types on every rank) the
// batches are the single-process typed edge loader's: DGL's seed edges
// grouped by relation with negatives per relation, PyG's pairs of one edge
// type with negatives among its end types, each batch with its typed view
// (pipeline.Options.Types). Consumption rules, sampler workers and closing
// are OpenLoader's.
func OpenEdgeLoader(g *core.Graph, c comm.Comm, items linkload.Items, opt linkload.Options, lopt pipeline.Options, alloc mem.Allocator) (*core.Loader, error) {
	return openEdgeShare(g, c, items, opt, lopt, alloc, nil, nil)
}

// openEdgeShare opens rank c.LocalRanks()[0]'s share of the group's edge
// epochs on g (see OpenEdgeLoader). part is openShare's; edges, when not
// nil, resolves the seed edge ids and node ids (a dsp part holds the
// in-edges of its own nodes only).
func openEdgeShare(g *core.Graph, c comm.Comm, items linkload.Items, opt linkload.Options, lopt pipeline.Options, alloc mem.Allocator,
	part *partLoad, edges linkload.EdgeLookup) (*core.Loader, error) {
	return openGroup(g, c, lopt, part, func(in core.Internals, pt *partition.Partitioned, rt *sample.Runtime, lopt pipeline.Options) (*pipeline.Pipeline, error) {
		var lk *linkload.Linker
		var err error
		opt.NodeTime = in.Runtime(0).NodeTime // negatives under node times
		if edges != nil {
			lk, err = linkload.NewOver(pt, in.Types, opt, edges)
		} else {
			lk, err = linkload.New(pt, in.Types, opt)
		}
		if err != nil {
			return nil, err
		}
		src, err := lk.Source(rt, items)
		if err != nil {
			return nil, err
		}
		if len(lopt.EdgeFeatureNames) > 0 {
			if in.Edges == nil {
				return nil, errs.Errorf(nil, "edge feature names %v are requested but the graph has no edge data", lopt.EdgeFeatureNames)
			}
			lopt.EdgeStore = in.Edges
		}
		return pipeline.NewMaker(src, pt, in.Store, src.NumItems(), lopt, alloc)
	})
}

// OpenEdgeLoader opens the part's edge loader: every rank of the group
// opens it on its own part (the same partition) with c (as Part.OpenLoader
// takes it), the same items (seed edge ids, or pairs, of the whole graph in
// original ids) and the same options. The batches are OpenEdgeLoader's
// (the package function's): the single-process edge loader's batches of
// the whole graph with the same items and options, bit for bit, node data
// of other ranks' nodes fetched from their owners after each batch is
// made, as Part.OpenLoader fetches it.
//
// dsp: a rank holds the in-edges of its own nodes only, so the endpoints
// of the seed edges (DGL) are resolved at open, in one exchange over c
// where each rank answers for the edges into its nodes. GlobalUniform
// negatives reject the pairs that are edges of the whole graph: each
// batch draws every trial pair of its slots up front and asks the owners
// of their destinations which are edges, in one exchange round (two
// all-to-alls) that every rank runs for every batch it makes, padded ones
// included, on the runtime of the sampler worker that samples it, right
// before the batch's sampling exchanges (seedEdges.AreEdges); the
// negatives are the single-process ones, bit for bit. Self-reliant parts
// and edge data are refused (errs.ErrNotSupported); temporal sampling
// needs the part's times (SetNodeTime, ShareNodeTime, SetEdgeTime). A
// typed part's batches are the typed edge loader's of the whole typed
// graph (seed edges grouped by relation, negatives per type, typed views),
// its per-type node data fetched as Part.OpenLoader fetches it.
func (p *Part) OpenEdgeLoader(c comm.Comm, items linkload.Items, opt linkload.Options, lopt pipeline.Options, alloc mem.Allocator) (*core.Loader, error) {
	if c == nil {
		return nil, errs.Errorf(nil, "communicator is nil")
	}
	if err := p.checkComm(c); err != nil {
		return nil, err
	}
	if err := p.checkTimes(opt.Request.Temporal); err != nil {
		return nil, err
	}
	switch {
	case p.layout == rankpart.LayoutSelfReliant:
		return nil, errs.Errorf(errs.ErrNotSupported, "the edge loaders of rank parts serve the dsp and hybrid layouts (a self-reliant rank holds the neighbourhoods of its own seed nodes, not of seed edges)")
	case len(lopt.EdgeFeatureNames) > 0:
		return nil, errs.Errorf(errs.ErrNotSupported, "the edge loaders of rank parts gather no edge data (a part holds none)")
	case opt.ExcludeFunc != nil:
		return nil, errs.Errorf(errs.ErrNotSupported, "the edge loaders of rank parts take no exclude callback (it names edges of the whole graph)")
	case p.layout == rankpart.LayoutDSP && opt.Request.Scheme == sample.LayerWise:
		return nil, errs.Errorf(errs.ErrNotSupported, "layer-wise sampling needs the degree of every node, which a rank of the dsp layout holds for its own nodes only (use the hybrid layout)")
	}
	if opt.Mode == linkload.DGL {
		// Checked here as the loader would check them, before the
		// exchanges of the open, so that every rank fails alike instead
		// of leaving the others in them.
		if err := opt.Validate(nil); err != nil {
			return nil, err
		}
		if items.Pairs.Src != nil || items.Pairs.Dst != nil {
			return nil, errs.Errorf(nil, "a DGL edge loader takes seed edge ids, not pairs")
		}
	}
	part, err := p.load(c, lopt)
	if err != nil {
		return nil, err
	}
	if p.layout != rankpart.LayoutDSP {
		return openEdgeShare(p.g, c, items, opt, lopt, alloc, part, nil)
	}
	edges := &seedEdges{p: p}
	if opt.Mode != linkload.DGL { // pairs: resolved with their negatives, batch by batch
		err = p.g.Use(func(in core.Internals) error {
			edges.times = in.Runtime(0).NodeTime
			return edges.index(in.Part)
		})
		if err != nil {
			return nil, err
		}
		edges.ranges = p.timeRanges()
		p.timeMu.Lock()
		edges.earliest = p.earliest
		p.timeMu.Unlock()
		return openEdgeShare(p.g, c, items, opt, lopt, alloc, part, edges)
	}
	err = p.g.Use(func(in core.Internals) error {
		part.orig, part.internal, err = edges.resolve(c, in.Part, items.EdgeIDs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return openEdgeShare(p.g, c, items, opt, lopt, alloc, part, edges)
}

// checkComm checks that c runs this part's rank of its group.
func (p *Part) checkComm(c comm.Comm) error {
	if c.Size() != p.meta.Parts || len(c.LocalRanks()) != 1 || c.LocalRanks()[0] != p.info.Rank {
		return errs.Errorf(nil, "the communicator runs ranks %v of %d, but this is part %d of %d", c.LocalRanks(), c.Size(), p.info.Rank, p.meta.Parts)
	}
	return nil
}

// seedEdges is the linkload.EdgeAsker of a dsp rank p: the endpoints
// (internal ids) of the loader's seed edges, which the ranks resolved
// together, the rank's side of the ranks' answers to which pairs are edges
// (adj: the in-edges of the rank's own nodes, internal ids offsets[rank]
// to offsets[rank+1]), and the new ids of a batch's nodes (Internal,
// through the directory: Part.resolve).
type seedEdges struct {
	p        *Part
	numNodes int64
	ends     map[int64][2]int64
	rank     int
	offsets  []int64
	adj      *linkpred.EdgeIndex
	// times and earliest are the part's node times (by time slot: the
	// owned nodes first) and its node types' earliest nodes (ranges), for
	// negatives under node times (nodeTimer).
	times, earliest []int64
	ranges          []linkpred.NodeRange
}

var _ linkload.EdgeAsker = (*seedEdges)(nil)

// index makes the rank's side of the answers (over the rows of pt, the
// part's partition).
func (s *seedEdges) index(pt *partition.Partitioned) error {
	adj, err := linkpred.NewEdgeIndex(pt.Graph, 0)
	if err != nil {
		return err
	}
	s.numNodes, s.rank, s.offsets, s.adj = pt.Graph.NumNodes, s.p.info.Rank, pt.Offsets, adj
	return nil
}

func (s *seedEdges) NumNodes() int64 { return s.numNodes }
func (s *seedEdges) NumEdges() int64 { return s.p.meta.NumEdges }

// Internal asks the directory's ranks the new ids of orig (Part.resolve)
// on rt's exchanges.
func (s *seedEdges) Internal(ctx context.Context, rt *sample.Runtime, orig []int64) ([]int64, error) {
	return s.p.resolve(ctx, rt.Exchange, orig)
}

// AreEdges asks the owner of each pair's destination whether the pair is
// one of its in-edges, in one exchange round on rt (sample.Runtime.Exchange):
// requests (u, v pairs as int64) to each owner, then one answer byte per
// pair back. Every rank runs it once per batch it makes, with or without
// pairs, so that the rounds pair up.
func (s *seedEdges) AreEdges(ctx context.Context, rt *sample.Runtime, pairs linkpred.Pairs) ([]bool, error) {
	size := len(s.offsets) - 1
	asked := make([][]int64, size) // per owner: u, v, u, v, ...
	at := make([][]int, size)      // per owner: the positions of its pairs
	for i, v := range pairs.Dst {
		u := pairs.Src[i]
		if u < 0 || u >= s.numNodes || v < 0 || v >= s.numNodes {
			return nil, fmt.Errorf("pair %d (%d -> %d) is out of range [0, %d)", i, u, v, s.numNodes)
		}
		q := ownerOf(s.offsets, v)
		asked[q] = append(asked[q], u, v)
		at[q] = append(at[q], i)
	}
	send := make([]mem.Buffer, size)
	for q := range send {
		send[q] = mem.HostBuffer(mem.Bytes(asked[q]))
	}
	recv, err := rt.Exchange(ctx, send)
	if err != nil {
		return nil, err
	}
	lo, hi := s.offsets[s.rank], s.offsets[s.rank+1]
	answers := make([]mem.Buffer, size)
	for q, b := range recv {
		raw := b.Bytes()
		if len(raw)%16 != 0 {
			return nil, fmt.Errorf("rank %d asked about %d bytes of pairs (want pairs of int64)", q, len(raw))
		}
		req := mem.Int64s(raw) // read before the next exchange
		out := make([]byte, len(req)/2)
		for k := range out {
			u, v := req[2*k], req[2*k+1]
			if u < 0 || u >= s.numNodes || v < lo || v >= hi {
				return nil, fmt.Errorf("rank %d asked whether %d -> %d is an edge of rank %d, which owns nodes [%d, %d)", q, u, v, s.rank, lo, hi)
			}
			if s.adj.HasEdge(u, v) {
				out[k] = 1
			}
		}
		answers[q] = mem.HostBuffer(out)
	}
	back, err := rt.Exchange(ctx, answers)
	if err != nil {
		return nil, err
	}
	edge := make([]bool, pairs.Len())
	for q, b := range back {
		raw := b.Bytes()
		if len(raw) != len(at[q]) {
			return nil, fmt.Errorf("rank %d answered %d of the %d pairs asked", q, len(raw), len(at[q]))
		}
		for k, i := range at[q] {
			edge[i] = raw[k] != 0
		}
	}
	return edge, nil
}

func (s *seedEdges) Endpoints(eids []int64) (linkpred.Pairs, error) {
	out := linkpred.Pairs{Src: make([]int64, len(eids)), Dst: make([]int64, len(eids))}
	for i, e := range eids {
		uv, ok := s.ends[e]
		if !ok {
			return linkpred.Pairs{}, fmt.Errorf("seed edge ids[%d] = %d is not an edge of the graph (%d edges)", i, e, s.NumEdges())
		}
		out.Src[i], out.Dst[i] = uv[0], uv[1]
	}
	return out, nil
}

// resolve finds the endpoints of the seed edge ids eids (global ids, the
// same on every rank) with the other ranks of c: each rank looks them up
// among the in-edges its part holds (pt.Graph, internal node ids, global
// edge ids) and sends what it found, with the endpoints' original ids
// (pt.Ranked knows its own nodes' and their sources'), to every rank, in
// one all-to-all, so that every rank knows them all. It returns the
// endpoints' original and new ids (for partition.Partitioned.WithIDs). An
// id no rank holds is reported by every rank alike (its first position in
// eids).
func (s *seedEdges) resolve(c comm.Comm, pt *partition.Partitioned, eids []int64) (orig, internal []int64, err error) {
	if err := s.index(pt); err != nil {
		return nil, nil, err
	}
	want := make(map[int64]bool, len(eids))
	for _, e := range eids {
		want[e] = true
	}
	g := pt.Graph
	var found []int64 // (edge id, source, destination, their original ids) tuples
	rowLo, rowHi := g.HeldRows()
	for u := rowLo; u < rowHi; u++ {
		posLo, posHi := g.Span(u)
		for pos := posLo; pos < posHi; pos++ {
			if e := g.EdgeID(pos); want[e] {
				src := g.Source(pos)
				found = append(found, e, src, u, pt.OrigID(src), pt.OrigID(u))
				delete(want, e) // an edge id names one edge
			}
		}
	}
	send := make([]mem.Buffer, c.Size())
	for j := range send {
		send[j] = mem.HostBuffer(mem.Bytes(found))
	}
	recv, err := c.AllToAll(context.Background(), s.rank, send, mem.NoStream)
	if err != nil {
		return nil, nil, err
	}
	s.ends = make(map[int64][2]int64, len(eids))
	for q, b := range recv {
		raw := b.Bytes()
		if len(raw)%40 != 0 {
			return nil, nil, fmt.Errorf("rank %d sent %d bytes of seed edges (want tuples of 5 int64)", q, len(raw))
		}
		t := mem.Int64s(raw)
		for i := 0; i < len(t); i += 5 {
			for _, v := range t[i+1 : i+5] {
				if v < 0 || v >= g.NumNodes {
					return nil, nil, fmt.Errorf("rank %d sent seed edge %d with endpoint %d out of range [0, %d)", q, t[i], v, g.NumNodes)
				}
			}
			s.ends[t[i]] = [2]int64{t[i+1], t[i+2]}
			internal = append(internal, t[i+1], t[i+2])
			orig = append(orig, t[i+3], t[i+4])
		}
	}
	if _, err := s.Endpoints(eids); err != nil {
		return nil, nil, errs.Errorf(nil, "%v", err)
	}
	return orig, internal, nil
}
