package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// Block is one hop's sampled block (see sample.Block) in int64 tensors:
// Indptr [NumDst+1], Indices [nnz] (positions into Batch.Nodes), EdgeIDs [nnz].
type Block struct {
	Indptr, Indices, EdgeIDs  mem.Tensor
	NumDst, NumSrc, DstOffset int64
}

// Batch is one materialized mini-batch. Every tensor's Data comes from the
// allocator the batch was made with.
type Batch struct {
	Index      int64      // batch number within the epoch
	Epoch      uint64     // epoch it belongs to
	Seeds      mem.Tensor // int64 [B] original ids, in batch order
	InputIndex mem.Tensor // int64 [B] positions of the seeds in the seeds array given to New
	Nodes      mem.Tensor // int64 [n] ORIGINAL ids, seeds first
	HopCounts  mem.Tensor // int64 [L+1]
	Blocks     []Block    // hop order
	// Batch is set for disjoint batches only (sample.Request.Disjoint):
	// int64 [n], the seed position of each node's subgraph.
	Batch mem.Tensor
	// Typed is set for batches of typed graphs (Options.Types, SetTyped):
	// the batch split by node type and relation.
	Typed *TypedView
	// NodeData holds the FeatureNames gathered over Nodes ([n, ...]) and the
	// LabelNames gathered over the seeds ([B, ...]), in their stored dtypes.
	NodeData map[string]mem.Tensor
	// EdgeData holds the EdgeFeatureNames gathered over the batch's sampled
	// edges: the edge ids of Blocks[0], then of Blocks[1], ... ([sum of the
	// blocks' edges, ...]; a batch without blocks, engine/subload's: its
	// COO's edges), in their stored dtypes.
	EdgeData map[string]mem.Tensor
	// Link holds the pair indices of an edge-level batch (int64 tensors,
	// in engine/linkload's LinkField order, made by its Maker); nil for a
	// node batch.
	Link []mem.Tensor
	// COO is set for the batches of pipelines with Options.COO: the
	// batch's sampled edges as one edge list (see SetCOO).
	COO *COO
	// Excluded are edge ids a Maker's batch left out of its sample
	// (engine/linkload: DGL's exclusion of the batch); the induced edge
	// lists (InducedEdges, SubgraphEdges) leave them out too. Go memory,
	// never handed out.
	Excluded []int64

	alloc mem.Allocator
	dev   *deviceOut // set for a device backend's batches (NewDeviceBatch)
}

// Release frees every tensor whose Data is non-nil through the allocator the
// batch came from and sets its Data to nil. Callers that take a tensor's
// Data (the C API wraps it in DLPack and frees it later) set that tensor's
// Data to nil first. Device tensors of a device backend's batch go back
// to its device allocator in the order of the batch's stream (see
// ReleaseAfter). Idempotent; a nil *Batch is a no-op.
func (b *Batch) Release() {
	if b == nil || b.alloc == nil {
		return
	}
	defer b.dev.finish()
	free := func(t *mem.Tensor) {
		if t.Data != nil {
			b.alloc.Free(t.Data)
			t.Data = nil
		}
		b.dev.free(t)
	}
	free(&b.Seeds)
	free(&b.InputIndex)
	free(&b.Nodes)
	free(&b.HopCounts)
	free(&b.Batch)
	b.Typed.release(free)
	for i := range b.Blocks {
		free(&b.Blocks[i].Indptr)
		free(&b.Blocks[i].Indices)
		free(&b.Blocks[i].EdgeIDs)
	}
	for _, m := range []map[string]mem.Tensor{b.NodeData, b.EdgeData} {
		for name, t := range m {
			free(&t)
			m[name] = t
		}
	}
	for i := range b.Link {
		free(&b.Link[i])
	}
	if b.COO != nil {
		free(&b.COO.Index)
		free(&b.COO.EdgeIDs)
	}
}

// COO is a batch's sampled edges as one edge list, the edges of Blocks[0]
// then of Blocks[1], ..., each block's in its CSC order: what PyG's
// edge_index and e_id are. int64, from the batch's allocator.
type COO struct {
	// Index is [2, E]: row 0 each edge's source, row 1 its destination,
	// as positions in Batch.Nodes (PyG's edge_index, one buffer).
	Index   mem.Tensor
	EdgeIDs mem.Tensor // [E] each edge's original id
}

// SetCOO computes b.COO from b's blocks (not taken yet), in the workers of
// a pipeline with Options.COO, so that the consumer does not expand the
// blocks' CSC itself. On error b.COO stays nil and nothing stays allocated.
func (b *Batch) SetCOO() error {
	if b.COO != nil {
		return errors.New("pipeline: SetCOO: the batch already has its COO")
	}
	var n int64
	for h, blk := range b.Blocks {
		if shapeLen(blk.Indices) != int64(len(mem.Int64s(blk.Indices.Data))) || shapeLen(blk.Indptr) != blk.NumDst+1 {
			return fmt.Errorf("pipeline: SetCOO: block %d was taken or is malformed", h)
		}
		n += shapeLen(blk.Indices)
	}
	alloc := b.Allocator()
	ibuf, index, err := mem.AllocInt64(alloc, int(2*n))
	if err != nil {
		return err
	}
	ebuf, ids, err := mem.AllocInt64(alloc, int(n))
	if err != nil {
		alloc.Free(ibuf)
		return err
	}
	c := &COO{
		Index:   mem.Tensor{DType: mem.Int64, Shape: []int64{2, n}, Data: ibuf},
		EdgeIDs: mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: ebuf},
	}
	row, col := index[:n], index[n:]
	at := 0
	for _, blk := range b.Blocks {
		indptr := mem.Int64s(blk.Indptr.Data)
		k := copy(row[at:], mem.Int64s(blk.Indices.Data))
		copy(ids[at:], mem.Int64s(blk.EdgeIDs.Data))
		for v := int64(0); v < blk.NumDst; v++ {
			for p := indptr[v]; p < indptr[v+1]; p++ {
				col[at+int(p)] = blk.DstOffset + v
			}
		}
		at += k
	}
	b.COO = c
	return nil
}

// COOEdges says which edges a batch's edge list holds (Options.COOEdges).
type COOEdges int

// The edge lists a pipeline with Options.COO makes.
const (
	// SampledEdges are the batch's sampled edges, hop after hop (SetCOO).
	SampledEdges COOEdges = iota
	// BidirectionalEdges are the sampled edges made bidirectional as
	// PyG's subgraph_type="bidirectional" makes them (to_bidirectional):
	// every sampled edge u->v and its reverse v->u with the same edge id,
	// one edge per (source, destination) pair, sorted by destination then
	// source; a pair listed more than once keeps the id of its last
	// listing (the sampled edges in order, then their reverses in order).
	BidirectionalEdges
	// InducedEdges are every edge of the graph among the batch's nodes
	// (PyG's subgraph_type="induced"), as InducedEdgeList lists them,
	// but those in Batch.Excluded. A typed graph's batch becomes a
	// subgraph batch of them (one block, see toSubgraph), so that its
	// typed view splits them by relation.
	InducedEdges
	// SubgraphEdges are InducedEdges as dgl.DGLGraph.subgraph lists them
	// (by source position, then edge id), and the batch becomes a
	// subgraph batch: its blocks are dropped (its hop counts stay), its
	// edge data gathered over this list. DGL's ShaDowKHopSampler inside
	// as_edge_prediction_sampler: the subgraph the sample induces, without
	// the batch's excluded edges.
	SubgraphEdges
)

// setEdges makes b's edge list of kind k (b has blocks; internal are its
// nodes' internal ids on p); oneBlock (a typed graph's batch):
// SubgraphEdges and InducedEdges keep the edges as one block (see
// toSubgraph).
func (b *Batch) setEdges(k COOEdges, p *partition.Partitioned, internal []int64, oneBlock bool) error {
	if k == InducedEdges || k == SubgraphEdges {
		src, dst, ids, err := InducedEdgeList(p.Graph, internal)
		if err != nil {
			return err
		}
		src, dst, ids = leaveOut(src, dst, ids, b.Excluded)
		if k == SubgraphEdges {
			sortBySource(src, dst, ids)
		}
		if k == SubgraphEdges || oneBlock {
			if err := b.toSubgraph(src, dst, ids, oneBlock); err != nil {
				return err
			}
		}
		return b.setCOOLists(src, dst, ids)
	}
	if err := b.SetCOO(); err != nil || k != BidirectionalEdges {
		return err
	}
	c := b.COO
	index, ids := mem.Int64s(c.Index.Data), mem.Int64s(c.EdgeIDs.Data)
	n := len(ids)
	// 2n listings: the sampled edges, then their reverses
	type listing struct{ src, dst, id int64 }
	all := make([]listing, 2*n)
	for k := range n {
		all[k] = listing{index[k], index[n+k], ids[k]}
		all[n+k] = listing{index[n+k], index[k], ids[k]}
	}
	slices.SortStableFunc(all, func(a, b listing) int {
		if a.dst != b.dst {
			return cmp.Compare(a.dst, b.dst)
		}
		return cmp.Compare(a.src, b.src)
	})
	src, dst, out := make([]int64, 0, 2*n), make([]int64, 0, 2*n), make([]int64, 0, 2*n)
	for k, l := range all {
		if k+1 < len(all) && all[k+1].src == l.src && all[k+1].dst == l.dst {
			continue // the last listing of the pair stands
		}
		src, dst, out = append(src, l.src), append(dst, l.dst), append(out, l.id)
	}
	b.COO = nil
	a := b.Allocator()
	a.Free(c.Index.Data)
	a.Free(c.EdgeIDs.Data)
	return b.setCOOLists(src, dst, out)
}

// leaveOut returns the edges src[k] -> dst[k] (ids ids) whose id is not in
// excluded, in order, in place.
func leaveOut(src, dst, ids, excluded []int64) ([]int64, []int64, []int64) {
	if len(excluded) == 0 {
		return src, dst, ids
	}
	skip := make(map[int64]struct{}, len(excluded))
	for _, e := range excluded {
		skip[e] = struct{}{}
	}
	n := 0
	for k, e := range ids {
		if _, out := skip[e]; !out {
			src[n], dst[n], ids[n] = src[k], dst[k], e
			n++
		}
	}
	return src[:n], dst[:n], ids[:n]
}

// sortBySource orders the edges src[k] -> dst[k] (ids ids) by source, then
// edge id, in place.
func sortBySource(src, dst, ids []int64) {
	order := make([]int, len(ids))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, c int) int {
		if src[a] != src[c] {
			return cmp.Compare(src[a], src[c])
		}
		return cmp.Compare(ids[a], ids[c])
	})
	s, d, e := slices.Clone(src), slices.Clone(dst), slices.Clone(ids)
	for k, at := range order {
		src[k], dst[k], ids[k] = s[at], d[at], e[at]
	}
}

// toSubgraph makes b a subgraph batch of the edges src[k] -> dst[k] (ids
// ids; positions in b.Nodes): its blocks are dropped or, with oneBlock
// (a typed graph's batch, which the typed view splits by relation), made
// one block over all its nodes holding the edges (destination-major, each
// destination's in list order) with hop counts [seeds, other nodes].
func (b *Batch) toSubgraph(src, dst, ids []int64, oneBlock bool) error {
	a := b.Allocator()
	for _, blk := range b.Blocks {
		for _, t := range []mem.Tensor{blk.Indptr, blk.Indices, blk.EdgeIDs} {
			if t.Data != nil {
				a.Free(t.Data)
			}
		}
	}
	b.Blocks = nil
	if !oneBlock {
		return nil
	}
	hops := mem.Int64s(b.HopCounts.Data)
	n := shapeLen(b.Nodes)
	if len(hops) == 0 || int64(len(hops)) != shapeLen(b.HopCounts) {
		return errors.New("pipeline: the batch's hop counts were taken or are malformed")
	}
	counts := []int64{hops[0], n - hops[0]}
	indptr := make([]int64, n+1)
	for _, d := range dst {
		indptr[d+1]++
	}
	for j := range n {
		indptr[j+1] += indptr[j]
	}
	next := slices.Clone(indptr[:n])
	indices, eids := make([]int64, len(ids)), make([]int64, len(ids))
	for k, d := range dst {
		indices[next[d]], eids[next[d]] = src[k], ids[k]
		next[d]++
	}
	blk := Block{NumDst: n, NumSrc: n}
	var err error
	tensors := []struct {
		t    *mem.Tensor
		data []int64
	}{{&blk.Indptr, indptr}, {&blk.Indices, indices}, {&blk.EdgeIDs, eids}}
	for _, f := range tensors {
		if *f.t, _, err = int64Tensor(a, f.data); err != nil {
			break
		}
	}
	b.Blocks = []Block{blk} // released with b from here on
	if err != nil {
		return err
	}
	hc, _, err := int64Tensor(a, counts)
	if err != nil {
		return err
	}
	a.Free(b.HopCounts.Data)
	b.HopCounts = hc
	return nil
}

// setCOOLists sets b.COO to the edges src[k] -> dst[k] with ids ids.
func (b *Batch) setCOOLists(src, dst, ids []int64) error {
	n := len(ids)
	alloc := b.Allocator()
	ibuf, index, err := mem.AllocInt64(alloc, 2*n)
	if err != nil {
		return err
	}
	ebuf, eids, err := mem.AllocInt64(alloc, n)
	if err != nil {
		alloc.Free(ibuf)
		return err
	}
	copy(index, src)
	copy(index[n:], dst)
	copy(eids, ids)
	b.COO = &COO{
		Index:   mem.Tensor{DType: mem.Int64, Shape: []int64{2, int64(n)}, Data: ibuf},
		EdgeIDs: mem.Tensor{DType: mem.Int64, Shape: []int64{int64(n)}, Data: ebuf},
	}
	return nil
}

// InducedEdgeList returns every edge of g whose ends are both in internal
// (internal ids, distinct): the subgraph they induce, as positions in
// internal (src, dst) and original edge ids, grouped by destination in
// the order of internal, a destination's edges in the order of its
// neighbour list (which renumbering into patches keeps).
func InducedEdgeList(g *graph.CSC, internal []int64) (src, dst, ids []int64, err error) {
	// A map rather than a dense array: the node set is usually tiny
	// beside the graph.
	local := make(map[int64]int64, len(internal))
	for i, v := range internal {
		if j, dup := local[v]; dup {
			return nil, nil, nil, &RepeatError{At: i, First: int(j)}
		}
		local[v] = int64(i)
	}
	for j, v := range internal {
		posLo, posHi := g.Span(v)
		for pos := posLo; pos < posHi; pos++ {
			if i, ok := local[g.Source(pos)]; ok {
				src, dst, ids = append(src, i), append(dst, int64(j)), append(ids, g.EdgeID(pos))
			}
		}
	}
	return src, dst, ids, nil
}

// RepeatError says that a node list repeats a node: At repeats First.
type RepeatError struct{ At, First int }

func (e *RepeatError) Error() string {
	return fmt.Sprintf("pipeline: nodes[%d] repeats nodes[%d] (want distinct ids)", e.At, e.First)
}

// NewBatch returns an empty batch whose tensors come from alloc (nil: the
// Go heap), for a Maker to fill.
func NewBatch(alloc mem.Allocator) *Batch {
	if alloc == nil {
		alloc = mem.Heap{}
	}
	return &Batch{alloc: alloc, NodeData: map[string]mem.Tensor{}}
}

// Allocator returns the allocator b's tensors come from.
func (b *Batch) Allocator() mem.Allocator {
	if b.alloc == nil {
		return mem.Heap{}
	}
	return b.alloc
}

// int64Tensor allocates a 1-D int64 tensor holding src through alloc.
func int64Tensor(alloc mem.Allocator, src []int64) (mem.Tensor, []int64, error) {
	buf, view, err := mem.AllocInt64(alloc, len(src))
	if err != nil {
		return mem.Tensor{}, nil, err
	}
	copy(view, src)
	return mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(src))}, Data: buf}, view, nil
}

// Materialize turns one sample.Result into a Batch whose every buffer is
// allocated from alloc (never the Go heap when alloc is a C allocator: that
// is why all output buffers go through alloc). seedsOrig are the batch's
// seeds as original ids (they must be res.Nodes[:B] mapped through
// p.NewToOld) and inputIndex their positions in the caller's seed array.
// Node data rows are read from store by internal id: featureNames over all
// of res.Nodes, labelNames over the seeds. alloc nil means mem.Heap. On
// error nothing stays allocated. Index and Epoch are left zero.
func Materialize(res *sample.Result, seedsOrig []int64, inputIndex []int64, p *partition.Partitioned, store feature.Gatherer, featureNames, labelNames []string, alloc mem.Allocator, threads int) (*Batch, error) {
	if (len(featureNames) > 0 || len(labelNames) > 0) && isNil(store) {
		return nil, errors.New("pipeline: node data requested but store is nil")
	}
	b, err := materializeTopology(res, seedsOrig, inputIndex, p, alloc)
	if err != nil {
		return nil, err
	}
	if err := b.loadNodeData(res, store, typedNames{}, featureNames, labelNames, threads, nil); err != nil {
		b.Release()
		return nil, err
	}
	return b, nil
}

// materializeTopology is the part of Materialize that the pipeline's
// sampler workers do: everything but the node data.
func materializeTopology(res *sample.Result, seedsOrig []int64, inputIndex []int64, p *partition.Partitioned, alloc mem.Allocator) (*Batch, error) {
	if res == nil {
		return nil, errors.New("pipeline: result is nil")
	}
	if p == nil || p.Graph == nil {
		return nil, errors.New("pipeline: partition (or its graph) is nil")
	}
	if len(res.HopCounts) != len(res.Blocks)+1 {
		return nil, fmt.Errorf("pipeline: result has %d hop counts for %d blocks (want blocks+1)", len(res.HopCounts), len(res.Blocks))
	}
	nb := len(seedsOrig)
	if res.HopCounts[0] != int64(nb) || len(res.Nodes) < nb {
		return nil, fmt.Errorf("pipeline: len(seedsOrig) = %d does not match the result's %d seeds", nb, res.HopCounts[0])
	}
	if len(inputIndex) != nb {
		return nil, fmt.Errorf("pipeline: len(inputIndex) = %d (want len(seedsOrig) = %d)", len(inputIndex), nb)
	}
	if alloc == nil {
		alloc = mem.Heap{}
	}
	n := p.Graph.NumNodes
	for i, v := range res.Nodes {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("pipeline: result node[%d] = %d is out of range [0, %d)", i, v, n)
		}
	}

	b := &Batch{alloc: alloc, Blocks: make([]Block, len(res.Blocks)), NodeData: map[string]mem.Tensor{}}
	ok := false
	defer func() {
		if !ok {
			b.Release()
		}
	}()
	var err error
	if b.Seeds, _, err = int64Tensor(alloc, seedsOrig); err != nil {
		return nil, err
	}
	if b.InputIndex, _, err = int64Tensor(alloc, inputIndex); err != nil {
		return nil, err
	}
	var nodes []int64
	if b.Nodes, nodes, err = int64Tensor(alloc, res.Nodes); err != nil {
		return nil, err
	}
	switch {
	case p.NewToOld != nil:
		if int64(len(p.NewToOld)) != n {
			return nil, fmt.Errorf("pipeline: len(partition.NewToOld) = %d (want %d)", len(p.NewToOld), n)
		}
		for i, v := range nodes {
			nodes[i] = p.NewToOld[v]
		}
	case p.Ranked != nil:
		// A rank's part: the seeds are seedsOrig (the sample starts with
		// the seeds it was given), the other nodes' original ids are their
		// owners' to give (the Share's RowLoader writes them).
		copy(nodes, seedsOrig)
		for i := nb; i < len(nodes); i++ {
			nodes[i] = -1
		}
	}
	if !slices.Equal(nodes[:nb], seedsOrig) {
		return nil, errors.New("pipeline: seedsOrig are not the result's seeds (res.Nodes[:B] in original ids)")
	}
	if b.HopCounts, _, err = int64Tensor(alloc, res.HopCounts); err != nil {
		return nil, err
	}
	if res.Batch != nil {
		if len(res.Batch) != len(res.Nodes) {
			return nil, fmt.Errorf("pipeline: result has %d batch entries for %d nodes", len(res.Batch), len(res.Nodes))
		}
		if b.Batch, _, err = int64Tensor(alloc, res.Batch); err != nil {
			return nil, err
		}
	}
	for h, rb := range res.Blocks {
		if int64(len(rb.Indptr)) != rb.NumDst+1 || len(rb.Indices) != len(rb.EdgeIDs) {
			return nil, fmt.Errorf("pipeline: result block %d is malformed (%d indptr entries for %d dst nodes, %d indices, %d edge ids)",
				h, len(rb.Indptr), rb.NumDst, len(rb.Indices), len(rb.EdgeIDs))
		}
		blk := &b.Blocks[h]
		blk.NumDst, blk.NumSrc, blk.DstOffset = rb.NumDst, rb.NumSrc, rb.DstOffset
		if blk.Indptr, _, err = int64Tensor(alloc, rb.Indptr); err != nil {
			return nil, err
		}
		if blk.Indices, _, err = int64Tensor(alloc, rb.Indices); err != nil {
			return nil, err
		}
		if blk.EdgeIDs, _, err = int64Tensor(alloc, rb.EdgeIDs); err != nil {
			return nil, err
		}
	}
	ok = true
	return b, nil
}

// AddNodeData allocates the node data tensor name of rows rows of dtype
// dtype and row shape rowShape from b's allocator, puts it in b.NodeData
// and returns it, for the caller to fill its Data (a RowLoader's rows).
// A name already in b is an error. On error b is unchanged.
func (b *Batch) AddNodeData(name string, dtype mem.DType, rows int, rowShape []int64) (mem.Tensor, error) {
	if b.NodeData == nil {
		b.NodeData = map[string]mem.Tensor{}
	}
	return b.addData(b.NodeData, "node", name, dtype, rows, rowShape)
}

// addData allocates a tensor of rows rows from b's allocator into m[name].
func (b *Batch) addData(m map[string]mem.Tensor, what, name string, dtype mem.DType, rows int, rowShape []int64) (mem.Tensor, error) {
	if _, dup := m[name]; dup {
		return mem.Tensor{}, fmt.Errorf("pipeline: %s data %q requested twice", what, name)
	}
	if b.alloc == nil {
		b.alloc = mem.Heap{}
	}
	t := mem.Tensor{DType: dtype, Shape: append([]int64{int64(rows)}, rowShape...)}
	var err error
	if t.Data, err = b.alloc.Alloc(rows * t.RowBytes()); err != nil {
		return mem.Tensor{}, err
	}
	m[name] = t
	return t, nil
}

// loadEdgeData gathers names from store (one row per edge id) over the
// edge ids of b's blocks, in block order (a batch without blocks: of its
// COO), into b.EdgeData. On error what
// was gathered so far stays in b, for b.Release. When tc is not nil, the
// rows are counted in it (host memory).
func (b *Batch) loadEdgeData(store feature.Gatherer, names []string, threads int, tc *feature.TierCounts) error {
	if len(names) == 0 {
		return nil
	}
	var ids []int64
	if len(b.Blocks) == 0 && b.COO != nil { // a subgraph batch (engine/subload): its edges are its COO
		ids = mem.Int64s(b.COO.EdgeIDs.Data)
		if int64(len(ids)) != shapeLen(b.COO.EdgeIDs) {
			return errors.New("pipeline: the batch's COO edge ids were taken or are malformed")
		}
	}
	for h, blk := range b.Blocks {
		e := mem.Int64s(blk.EdgeIDs.Data)
		if int64(len(e)) != shapeLen(blk.EdgeIDs) {
			return fmt.Errorf("pipeline: block %d's edge ids were taken or are malformed", h)
		}
		ids = append(ids, e...)
	}
	if b.EdgeData == nil {
		b.EdgeData = map[string]mem.Tensor{}
	}
	for _, name := range names {
		src, ok := store.Get(name)
		if !ok {
			return fmt.Errorf("pipeline: no edge data named %q", name)
		}
		t, err := b.addData(b.EdgeData, "edge", name, src.DType, len(ids), src.Shape[1:])
		if err != nil {
			return err
		}
		if err := store.Gather(name, t.Data, ids, threads); err != nil {
			return fmt.Errorf("pipeline: edge data: %w", err)
		}
		if tc != nil {
			tc.Add(feature.HostCounts(len(ids), src.RowBytes()))
		}
	}
	return nil
}

// loadNodeData gathers featureNames over res.Nodes and labelNames over the
// seeds into b (allocated from b's allocator). On error the node data
// gathered so far stays in b, for b.Release.
// When tc is not nil, where the rows came from is added to it.
func (b *Batch) loadNodeData(res *sample.Result, store feature.Gatherer, typed typedNames, featureNames, labelNames []string, threads int, tc *feature.TierCounts) error {
	nb := int(res.HopCounts[0])
	gather := func(name string, ids []int64) error {
		src, found := store.Get(name)
		if !found {
			return fmt.Errorf("pipeline: no node data named %q in the store", name)
		}
		if nt, ok := typed.names[name]; ok {
			return b.loadTyped(name, src, typed.types.NodeOffsets, nt, len(ids), threads, tc)
		}
		t, err := b.AddNodeData(name, src.DType, len(ids), src.Shape[1:])
		if err != nil {
			return err
		}
		if tg, ok := store.(feature.TierGatherer); ok {
			c, err := tg.GatherTiers(name, t.Data, ids, threads)
			if tc != nil {
				tc.Add(c)
			}
			return err
		}
		if err := store.Gather(name, t.Data, ids, threads); err != nil {
			return err
		}
		if tc != nil {
			tc.Add(feature.HostCounts(len(ids), src.RowBytes()))
		}
		return nil
	}
	for _, name := range featureNames {
		if err := gather(name, res.Nodes); err != nil {
			return err
		}
	}
	for _, name := range labelNames {
		if err := gather(name, res.Nodes[:nb]); err != nil {
			return err
		}
	}
	return nil
}

// typedNames are the per-type node data a pipeline gathers by type
// (Options.NodeDataTypes) and the graph's types; empty for none.
type typedNames struct {
	types *graph.Types
	names map[string]int
}

// typedNames returns the per-type node data pl gathers by type.
func (pl *Pipeline) typedNames() typedNames {
	if pl.opt.Types == nil {
		return typedNames{}
	}
	return typedNames{types: pl.opt.Types, names: pl.opt.NodeDataTypes}
}

// loadTyped gathers per-type node data src (one row per node of type nt,
// in type-local order; offs the node type offsets) into b.NodeData[name]:
// a row per node of type nt among b's first n nodes (all of them, or the
// seeds), in batch order (the order of the type's nodes in the typed
// view), the row of its type-local id.
func (b *Batch) loadTyped(name string, src mem.Tensor, offs []int64, nt, n int, threads int, tc *feature.TierCounts) error {
	nodes := mem.Int64s(b.Nodes.Data)
	if n > len(nodes) {
		return fmt.Errorf("pipeline: %d rows of %q asked of a batch of %d nodes", n, name, len(nodes))
	}
	nodes = nodes[:n]
	lo, hi := offs[nt], offs[nt+1]
	rows := make([]int64, 0, len(nodes))
	for _, v := range nodes {
		if v >= lo && v < hi {
			rows = append(rows, v-lo)
		}
	}
	t, err := b.AddNodeData(name, src.DType, len(rows), src.Shape[1:])
	if err != nil {
		return err
	}
	if err := feature.Gather(t.Data, src, rows, threads); err != nil {
		return err
	}
	if tc != nil {
		tc.Add(feature.HostCounts(len(rows), src.RowBytes()))
	}
	return nil
}
