package distributed

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// partTimes are the test's node times (by original id) and edge times (by
// original edge id).
func partTimes() (node, edge []int64) {
	node = make([]int64, testgraph.Nodes)
	for v := range node {
		node[v] = int64(v*7) % 50
	}
	edge = make([]int64, testgraph.Edges)
	for e := range edge {
		edge[e] = int64(e*5) % 60
	}
	return node, edge
}

// TestPartTemporalEqualsSingleProcess checks temporal sampling on rank
// parts: after the ranks share their own nodes' times (ShareNodeTime, a
// collective) or set the edge times, every rank's node and edge batches
// are the single-process temporal loader's batches r, r+size, ... over
// the whole dataset with the same times, on dsp and hybrid parts.
func TestPartTemporalEqualsSingleProcess(t *testing.T) {
	srcDir, seeds := writeTestDataset(t)
	nodeTime, edgeTime := partTimes()
	whole, err := core.Open(srcDir, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	require.NoError(t, whole.SetNodeTime(nodeTime))
	require.NoError(t, whole.SetEdgeTime(edgeTime))
	ed, err := whole.Edges(core.EdgesCOO, -1, nil)
	require.NoError(t, err)
	src, dst := testgraph.I64(ed.First), testgraph.I64(ed.Second)

	seedTimes := make([]int64, len(seeds))
	for i := range seedTimes {
		seedTimes[i] = int64(i*11)%50 + 5
	}
	type tc struct {
		name string
		// open opens the single-process loader (p == nil) or rank p's.
		open func(p *Part, c comm.Comm, lopt pipeline.Options) (*core.Loader, error)
	}
	var cases []tc
	for _, temporal := range []sample.Temporal{sample.TemporalNode, sample.TemporalEdge} {
		req := testgraph.Sample()
		req.Disjoint, req.Frontier, req.Temporal = true, sample.FrontierNew, temporal
		cases = append(cases, tc{"node-loader-" + map[sample.Temporal]string{sample.TemporalNode: "node-times", sample.TemporalEdge: "edge-times"}[temporal], func(p *Part, c comm.Comm, lopt pipeline.Options) (*core.Loader, error) {
			lopt.SeedTimes = seedTimes
			if p == nil {
				return whole.OpenLoader(seeds, req, lopt, nil)
			}
			return p.OpenLoader(c, seeds, req, lopt, mem.NewChecked(mem.Heap{}))
		}})
	}
	link := linkCases(src, dst)[6] // PyG's disjoint binary negatives
	link.opt.Request.Temporal = sample.TemporalNode
	link.opt.PyG.Mode, link.opt.PyG.Amount = linkpred.PyGNone, 0
	link.items.Times = make([]int64, link.items.Pairs.Len())
	for i := range link.items.Times {
		link.items.Times[i] = int64(i*13) % 50
	}
	cases = append(cases, tc{"edge-loader-node-times", func(p *Part, c comm.Comm, lopt pipeline.Options) (*core.Loader, error) {
		if p == nil {
			return whole.OpenEdgeLoader(link.items, link.opt, lopt, nil)
		}
		return p.OpenEdgeLoader(c, link.items, link.opt, lopt, mem.NewChecked(mem.Heap{}))
	}})

	const epochs = 2
	for _, k := range cases {
		ref, err := k.open(nil, nil, linkLoader())
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
			for _, c := range []struct{ size, workers int }{{2, 1}, {3, 2}} {
				t.Run(fmt.Sprintf("%s-%v-%d-workers=%d", k.name, layout, c.size, c.workers), func(t *testing.T) {
					dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: c.size, Seed: 4, Layout: layout})
					got := runRanks(t, c.size, c.workers, epochs, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
						p, err := OpenPart(dir, r, dataset.OpenOptions{})
						if err != nil {
							return nil, err
						}
						defer p.Close() // the loader keeps what it needs
						owned := p.OwnedNodes()
						times := make([]int64, len(owned))
						for i, v := range owned {
							times[i] = nodeTime[v]
						}
						if err := p.ShareNodeTime(h, times); err != nil {
							return nil, err
						}
						if err := p.SetEdgeTime(edgeTime); err != nil {
							return nil, err
						}
						return k.open(p, h, o)
					})
					requireShares(t, want, got)
				})
			}
		}
	}
}

// A self-reliant rank samples its own seeds temporally, alone, as the
// single-process loader samples the same seeds with the same times.
func TestSelfReliantPartTemporal(t *testing.T) {
	srcDir, _ := writeTestDataset(t)
	nodeTime, _ := partTimes()
	whole, err := core.Open(srcDir, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	require.NoError(t, whole.SetNodeTime(nodeTime))
	const size, epochs = 2, 2
	dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Range, Parts: size, Layout: rankpart.LayoutSelfReliant, Hops: 2})
	req := testgraph.Sample()
	req.Disjoint, req.Frontier, req.Temporal = true, sample.FrontierNew, sample.TemporalNode
	seeds := make([][]int64, size)
	times := func(seeds []int64) []int64 {
		ts := make([]int64, len(seeds))
		for i := range ts {
			ts[i] = int64(i*11)%50 + 5
		}
		return ts
	}
	got := runRanks(t, size, 1, epochs, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
		p, err := OpenPart(dir, r, dataset.OpenOptions{})
		if err != nil {
			return nil, err
		}
		defer p.Close()
		train, err := p.OwnedNodeData(dataset.TrainMaskKey, nil)
		if err != nil {
			return nil, err
		}
		for i, v := range p.OwnedNodes() {
			if train.Data[i] != 0 {
				seeds[r] = append(seeds[r], v)
			}
		}
		if err := p.SetNodeTime(nodeTime); err != nil {
			return nil, err
		}
		o.SeedTimes = times(seeds[r])
		return p.OpenLoader(h, seeds[r], req, o, mem.NewChecked(mem.Heap{}))
	})
	for r := range size {
		o := linkLoader()
		o.SeedTimes = times(seeds[r])
		ref, err := whole.OpenLoader(seeds[r], req, o, nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		for e := range epochs {
			require.Equal(t, want[e], got[r][e][:len(want[e])], "rank %d epoch %d", r, e)
		}
	}
}

// A part refuses temporal sampling until it holds the times, and a rank
// giving times of the wrong length makes every rank's ShareNodeTime fail,
// none left waiting.
func TestPartTimesValidate(t *testing.T) {
	srcDir, seeds := writeTestDataset(t)
	nodeTime, _ := partTimes()
	dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Range, Parts: 2, Layout: rankpart.LayoutDSP})
	l := comm.NewLocal(2)
	parts := make([]*Part, 2)
	hosts := make([]comm.Comm, 2)
	for r := range parts {
		p, err := OpenPart(dir, r, dataset.OpenOptions{})
		require.NoError(t, err)
		defer p.Close()
		parts[r] = p
		hosts[r], err = comm.NewHost(r, 2, l.Exchanger(r))
		require.NoError(t, err)
	}
	req := testgraph.Sample()
	req.Disjoint, req.Frontier, req.Temporal = true, sample.FrontierNew, sample.TemporalNode
	_, err := parts[0].OpenLoader(hosts[0], seeds, req, testgraph.Loader(), nil)
	require.ErrorIs(t, err, errs.ErrState)
	require.ErrorContains(t, err, "needs the node times, which a partition does not carry")
	req.Temporal = sample.TemporalEdge
	_, err = parts[0].OpenLoader(hosts[0], seeds, req, testgraph.Loader(), nil)
	require.ErrorContains(t, err, "needs the edge times")
	require.ErrorContains(t, parts[0].SetNodeTime(nodeTime[:5]), "node times have 5 entries, want one per node of the whole graph (300)")
	require.ErrorContains(t, parts[0].SetEdgeTime([]int64{1}), "edge times have 1 entries")
	require.ErrorContains(t, parts[0].ShareNodeTime(nil, nil), "communicator is nil")
	require.ErrorContains(t, parts[0].ShareNodeTime(hosts[1], nil), "this is part 0 of 2")

	errc := make(chan error, 2)
	for r, p := range parts {
		go func() {
			times := make([]int64, p.NumOwned())
			if r == 1 {
				times = times[1:]
			}
			errc <- p.ShareNodeTime(hosts[r], times)
		}()
	}
	e1, e2 := <-errc, <-errc
	require.Error(t, e1)
	require.Error(t, e2)
	for _, e := range []error{e1, e2} {
		require.Regexp(t, "owned node times have .* entries, want one per node rank 1 owns|the ranks sent the times of", e.Error())
	}
	// Nothing was set: still refused.
	_, err = parts[0].OpenLoader(hosts[0], seeds, req, testgraph.Loader(), nil)
	require.ErrorIs(t, err, errs.ErrState)
	// The whole vector, no exchange.
	require.NoError(t, parts[0].SetNodeTime(nodeTime))
}

// A dsp rank keeps the node times of its owned and halo nodes alone (8
// bytes each, not N), however they were given, and PyG's negatives under
// node times, which can be any node, ask their times of the owners: on 2
// and 4 ranks the edge batches are the single-process loader's.
func TestPartNodeTimesAreItsShare(t *testing.T) {
	srcDir, _ := writeTestDataset(t)
	nodeTime, _ := partTimes()
	whole, err := core.Open(srcDir, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	require.NoError(t, whole.SetNodeTime(nodeTime))
	ed, err := whole.Edges(core.EdgesCOO, -1, nil)
	require.NoError(t, err)
	src, dst := testgraph.I64(ed.First), testgraph.I64(ed.Second)
	const epochs = 2
	for _, k := range []int{4, 5, 6} { // PyG's binary, triplet and disjoint negatives
		link := linkCases(src, dst)[k]
		link.opt.Request.Disjoint, link.opt.Request.Frontier, link.opt.Request.Temporal = true, sample.FrontierNew, sample.TemporalNode
		link.items.Times = make([]int64, link.items.Pairs.Len())
		for i := range link.items.Times {
			link.items.Times[i] = int64(i*13)%50 - 2 // some before every node: the earliest
		}
		ref, err := whole.OpenEdgeLoader(link.items, link.opt, linkLoader(), nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		for _, size := range []int{2, 4} {
			for _, share := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s-%d-share=%v", link.name, size, share), func(t *testing.T) {
					dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: rankpart.LayoutDSP})
					got := runRanks(t, size, 1, epochs, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
						p, err := OpenPart(dir, r, dataset.OpenOptions{})
						if err != nil {
							return nil, err
						}
						defer p.Close()
						if share {
							owned := p.OwnedNodes()
							times := make([]int64, len(owned))
							for i, v := range owned {
								times[i] = nodeTime[v]
							}
							err = p.ShareNodeTime(h, times)
						} else {
							err = p.SetNodeTime(nodeTime)
						}
						if err != nil {
							return nil, err
						}
						m, err := p.Memory()
						if err != nil {
							return nil, err
						}
						if m.Times != 8*(m.Owned+m.Halo) || m.Owned+m.Halo >= m.Nodes {
							return nil, fmt.Errorf("rank %d: node times hold %d bytes for %d owned and %d halo nodes of %d", r, m.Times, m.Owned, m.Halo, m.Nodes)
						}
						return p.OpenEdgeLoader(h, link.items, link.opt, o, mem.NewChecked(mem.Heap{}))
					})
					requireShares(t, want, got)
				})
			}
		}
	}
}
