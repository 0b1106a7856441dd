package distributed

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// OpenLoader opens the part's loader: every rank of the group opens it on
// its own part (the same partition) with c (one rank per process, c's
// rank the part's, c.Size() its number of parts), the same options and,
// for dsp and hybrid, the same seeds.
//
// dsp and hybrid: seeds are original ids of the whole graph (any rank's).
// The batches are OpenLoader's (the package function's), i.e. the
// single-process loader's batches with the same seeds and options
// (bit-identical), dealt out round-robin with padding: sampling is CSP
// over c, and after each batch is sampled the node data of its nodes
// (features) and seeds (labels) is fetched from the ranks that own them in
// one exchange round (requests, then rows), by the sampler worker that
// sampled it (the pipeline's RowLoader); on dsp the owners answer the
// nodes' original ids in the same round, every batch, and the seeds' new
// ids are asked of the directory's ranks at open, so that the open is
// collective (as a typed part's, which exchanges the ranks' per-type
// counts). Layer-wise sampling is refused on dsp parts: its draw needs
// the degree of every frontier node, which a dsp rank holds for its own
// nodes only.
//
// self-reliant: seeds are this rank's own seeds (owned train, val or test
// nodes of its folder, whose neighbourhood it holds); each rank samples
// and gathers its batches alone, with no exchange, and every batch equals
// the single-process sample of its seeds with the same key as long as it
// has at most the partition's Hops hops. The ranks agree at open (one
// exchange over c) on the number of batches per epoch, the largest of the
// ranks', and a rank with fewer repeats its first ones, so that collective
// training steps pair up. Duplicate seeds are refused.
//
// On a typed part the batches carry their typed view, as a typed graph's,
// and lopt may name per-type node data ("<type>/<name>"), which a
// replicated graph's loader refuses: NodeData[name] then holds one row per
// batch node of that type (label names: per seed of that type), in the
// order of that type's nodes in the typed view, fetched with the batch's
// other rows (see typed_rows.go).
func (p *Part) OpenLoader(c comm.Comm, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*core.Loader, error) {
	if c == nil {
		return nil, errs.Errorf(nil, "communicator is nil")
	}
	if err := p.checkComm(c); err != nil {
		return nil, err
	}
	if err := p.checkTimes(req.Temporal); err != nil {
		return nil, err
	}
	if p.layout == rankpart.LayoutSelfReliant {
		return p.openLocal(c, seeds, req, lopt, alloc)
	}
	if p.layout == rankpart.LayoutDSP && req.Scheme == sample.LayerWise {
		return nil, errs.Errorf(errs.ErrNotSupported, "layer-wise sampling needs the degree of every node, which a rank of the dsp layout holds for its own nodes only (use the hybrid layout)")
	}
	part, err := p.load(c, lopt)
	if err != nil {
		return nil, err
	}
	if p.layout == rankpart.LayoutDSP {
		// The seeds' new ids, once: the directory's ranks answer them.
		if part.internal, err = p.resolve(context.Background(), commExchange(c, p.info.Rank), seeds); err != nil {
			return nil, errs.Errorf(nil, "seeds: %v", err)
		}
		part.orig = seeds
	}
	return openShare(p.g, c, seeds, req, lopt, alloc, part)
}

// partLoad is what a dsp or hybrid part's loader adds to a group's: the
// exchange that fetches the node data of its batches (rows), with the
// ranks' per-type tables of a typed part, and on a dsp part the original
// ids it resolved at open (its seeds, or its seed edges' endpoints) and
// their new ids (partition.Partitioned.WithIDs).
type partLoad struct {
	p              *Part
	typeStart      [][]int64
	orig, internal []int64
}

// load starts a dsp or hybrid part's partLoad after checking lopt as the
// loader will (so that a rank fails before the collectives of the open,
// not in them): the ranks' per-type tables of a typed part (a collective
// over c).
func (p *Part) load(c comm.Comm, lopt pipeline.Options) (*partLoad, error) {
	if lopt.BatchSize <= 0 {
		return nil, errs.Errorf(nil, "batch size = %d is invalid (want > 0)", lopt.BatchSize)
	}
	if err := p.g.Use(func(in core.Internals) error { return checkNames(in.Store, lopt, "graph") }); err != nil {
		return nil, err
	}
	ts, err := p.typeStarts(c)
	if err != nil {
		return nil, err
	}
	return &partLoad{p: p, typeStart: ts}, nil
}

// rows makes the row exchange of a dsp or hybrid part's loader, on the
// workers' channels; on a dsp part the owners answer the original ids of
// the batch's nodes with their rows.
func (pl *partLoad) rows(in core.Internals, channels []comm.Comm) pipeline.RowLoader {
	p := pl.p
	x := &rowExchange{c: channels, rank: p.info.Rank, offsets: in.Part.Offsets, store: in.Store,
		typeStart: pl.typeStart, nameType: p.nameType(in.Store)}
	if in.Part.Ranked != nil {
		x.owned = in.Part.Ranked.Owned()
	}
	return x
}

// openLocal opens a self-reliant part's loader (see OpenLoader): a
// pipeline over a runtime of its own (no exchange), with the share of a
// group of one whose batch count the ranks agreed on.
func (p *Part) openLocal(c comm.Comm, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*core.Loader, error) {
	if lopt.BatchSize <= 0 {
		return nil, errs.Errorf(nil, "batch size = %d is invalid (want > 0)", lopt.BatchSize)
	}
	if len(seeds) == 0 {
		return nil, errs.Errorf(nil, "seeds is empty: a self-reliant rank samples its own seeds")
	}
	for i, v := range seeds {
		if v < 0 || v >= p.meta.NumNodes {
			return nil, errs.Errorf(nil, "seeds[%d] = %d is out of range [0, %d)", i, v, p.meta.NumNodes)
		}
		if l := p.localRow[v]; l < 0 || l >= int64(len(p.seed)) || !p.seed[l] {
			return nil, errs.Errorf(nil, "seeds[%d] = %d is not a seed of rank %d (an owned train, val or test node): its neighbourhood is not in this part", i, v, p.info.Rank)
		}
	}
	n := len(seeds) / lopt.BatchSize
	if !lopt.DropLast && len(seeds)%lopt.BatchSize != 0 {
		n++
	}
	if n == 0 {
		return nil, errs.Errorf(nil, "%d seeds make no batch of %d with drop_last", len(seeds), lopt.BatchSize)
	}
	most, err := agreeMax(c, p.info.Rank, int64(n))
	if err != nil {
		return nil, err
	}
	return p.g.OpenLoaderWith(func(in core.Internals) (*pipeline.Pipeline, io.Closer, error) {
		if err := req.Validate(); err != nil {
			return nil, nil, err
		}
		if len(req.Fanouts) > p.meta.Hops {
			return nil, nil, errs.Errorf(nil, "%d hops, but the self-reliant part holds %d-hop neighbourhoods", len(req.Fanouts), p.meta.Hops)
		}
		store := &localGatherer{p: p, store: in.Store}
		if err := checkNames(store, lopt, "part"); err != nil {
			return nil, nil, err
		}
		rt, err := sample.NewRuntime(in.Part, comm.NewLocal(1), in.Runtime(lopt.Threads)) // the part's times, if set
		if err != nil {
			return nil, nil, err
		}
		s, err := bind(rt, req)
		if err != nil {
			return nil, nil, err
		}
		lopt.Workers = defaultWorkers(lopt)
		lopt.Share = &pipeline.Share{Rank: 0, Size: 1, Batches: int(most)}
		if p.types != nil && len(lopt.FeatureNames)+len(lopt.LabelNames) > 0 {
			// Per-type names gather rows of their type only.
			lopt.Share.Rows = &localRows{p: p, store: in.Store, nameType: p.nameType(in.Store)}
		}
		lopt.Types = in.Types // a typed part's batches carry their typed view
		pl, err := pipeline.New(s, in.Part, store, seeds, lopt, alloc)
		return pl, nil, err
	})
}

// agreeMax returns the largest of the ranks' v (one all-to-all over c).
func agreeMax(c comm.Comm, rank int, v int64) (int64, error) {
	msg := binary.LittleEndian.AppendUint64(nil, uint64(v))
	send := make([]mem.Buffer, c.Size())
	for j := range send {
		send[j] = mem.HostBuffer(msg)
	}
	recv, err := c.AllToAll(context.Background(), rank, send, mem.NoStream)
	if err != nil {
		return 0, err
	}
	most := v
	for j, b := range recv {
		if b.Len() != 8 {
			return 0, fmt.Errorf("rank %d sent %d bytes for its batch count (want 8)", j, b.Len())
		}
		most = max(most, int64(binary.LittleEndian.Uint64(b.Bytes())))
	}
	return most, nil
}

// localGatherer is a self-reliant part's node data by original id: of
// the whole graph's N nodes the rank holds the rows of those its folder
// expands, and gathering another is an error.
type localGatherer struct {
	p     *Part
	store *feature.Store
}

func (l *localGatherer) NumNodes() int64 { return l.p.meta.NumNodes }
func (l *localGatherer) Names() []string { return l.store.Names() }

// Get returns the dtype and shape of name as a tensor of N rows, with no
// Data: the rows the rank holds are gathered by Gather.
func (l *localGatherer) Get(name string) (mem.Tensor, bool) {
	t, ok := l.store.Get(name)
	if !ok {
		return mem.Tensor{}, false
	}
	shape := slices.Clone(t.Shape)
	shape[0] = l.p.meta.NumNodes
	return mem.Tensor{DType: t.DType, Shape: shape}, true
}

func (l *localGatherer) Gather(name string, dst []byte, ids []int64, threads int) error {
	rows := make([]int64, len(ids))
	for i, v := range ids {
		if v < 0 || v >= int64(len(l.p.localRow)) || l.p.localRow[v] < 0 {
			return fmt.Errorf("node %d is not held by rank %d", v, l.p.info.Rank)
		}
		rows[i] = l.p.localRow[v]
	}
	return l.store.Gather(name, dst, rows, threads)
}

// rowExchange fetches a batch's node data from the ranks that own it (dsp
// and hybrid parts), as the pipeline's RowLoader: every rank holds its
// patch's rows, internal ids [offsets[r], offsets[r+1]), at row id -
// offsets[r] of store. Sampler worker w exchanges on c[w].
type rowExchange struct {
	c       []comm.Comm
	rank    int
	offsets []int64
	store   *feature.Store
	// typeStart[q] (typed parts only) gives where the owned nodes of each
	// type start among rank q's rows (T+1 entries); nameType the node type
	// of a per-type name (-1 for a global one).
	typeStart [][]int64
	nameType  func(name string) int
	// owned, when not nil (dsp), are the original ids of the rank's owned
	// nodes: every batch node is asked of its owner, who answers its
	// original id before its rows, written into the batch's Nodes.
	owned []int64
}

var _ pipeline.RowLoader = (*rowExchange)(nil)

// LoadRows fetches the rows of the batch through one exchange round (two
// all-to-alls, which every rank runs for every batch) on worker's channel.
// Every row counts as a cold row of host memory (an owner's store).
func (x *rowExchange) LoadRows(ctx context.Context, worker int, b *pipeline.Batch, nodes []int64, numSeeds int, featureNames, labelNames []string, threads int) (feature.TierCounts, error) {
	var tc feature.TierCounts
	if err := x.load(ctx, x.c[worker], b, nodes, numSeeds, featureNames, labelNames, threads); err != nil {
		return tc, err
	}
	for _, list := range [][]string{featureNames, labelNames} {
		for _, name := range list {
			t := b.NodeData[name]
			tc.Add(feature.HostCounts(int(t.Shape[0]), t.RowBytes()))
		}
	}
	return tc, nil
}

// owner returns the rank owning internal id v.
func (x *rowExchange) owner(v int64) int { return ownerOf(x.offsets, v) }

// ownerOf returns the rank owning internal id v of a partition whose rank
// q owns ids [offsets[q], offsets[q+1]).
func ownerOf(offsets []int64, v int64) int {
	q, _ := slices.BinarySearch(offsets, v+1)
	return q - 1
}

// load gathers featureNames over nodes and labelNames over nodes[:nb]
// (internal ids) into b.NodeData. Requests: to each owner q, the rows it
// must send ([#feature rows, #label rows, rows...] as int64, rows relative
// to q's patch). Answers: with x.owned, the original ids of the feature
// rows asked (then every node of the batch, features or not); the rows
// of each feature name, then of each label name, back to back. A typed
// part's per-type name ("<type>/<name>") takes
// the rows asked of its type only, which both sides tell apart by the
// owners' type ranges (typeStart), and fills one row per batch node (seed)
// of its type, in batch order.
func (x *rowExchange) load(ctx context.Context, c comm.Comm, b *pipeline.Batch, nodes []int64, nb int, featureNames, labelNames []string, threads int) error {
	store := x.store
	size := len(x.offsets) - 1
	type want struct {
		feat, label []int64 // rows asked of the owner
		featAt      []int   // position in nodes of each feature row
		labelAt     []int
	}
	ws := make([]want, size)
	ids := x.owned != nil
	if len(featureNames) > 0 || ids {
		for i, v := range nodes {
			q := x.owner(v)
			ws[q].feat = append(ws[q].feat, v-x.offsets[q])
			ws[q].featAt = append(ws[q].featAt, i)
		}
	}
	if len(labelNames) > 0 {
		for i, v := range nodes[:nb] {
			q := x.owner(v)
			ws[q].label = append(ws[q].label, v-x.offsets[q])
			ws[q].labelAt = append(ws[q].labelAt, i)
		}
	}
	send := make([]mem.Buffer, size)
	for q := range size {
		msg := append([]int64{int64(len(ws[q].feat)), int64(len(ws[q].label))}, ws[q].feat...)
		msg = append(msg, ws[q].label...)
		send[q] = mem.HostBuffer(mem.Bytes(msg))
	}
	recv, err := c.AllToAll(ctx, x.rank, send, mem.NoStream)
	if err != nil {
		return err
	}
	// Answer every rank's requests from the owned rows.
	own := x.offsets[x.rank+1] - x.offsets[x.rank]
	answers := make([]mem.Buffer, size)
	for q := range size {
		raw := recv[q].Bytes()
		if len(raw) < 16 || len(raw)%8 != 0 {
			return fmt.Errorf("rank %d sent a %d-byte row request", q, len(raw))
		}
		req := slices.Clone(mem.Int64s(raw)) // recv is valid until the next exchange only
		nf, nl := req[0], req[1]
		if nf < 0 || nl < 0 || 2+nf+nl != int64(len(req)) {
			return fmt.Errorf("rank %d asked for %d and %d rows in a %d-entry request", q, nf, nl, len(req))
		}
		for _, r := range req[2:] {
			if r < 0 || r >= own {
				return fmt.Errorf("rank %d asked for row %d of rank %d's %d", q, r, x.rank, own)
			}
		}
		var out []byte
		if ids {
			for _, r := range req[2 : 2+nf] {
				out = binary.LittleEndian.AppendUint64(out, uint64(x.owned[r]))
			}
		}
		for k, list := range [][]string{featureNames, labelNames} {
			rows := req[2 : 2+nf]
			if k == 1 {
				rows = req[2+nf:]
			}
			for _, name := range list {
				t, ok := store.Get(name)
				if !ok {
					return fmt.Errorf("no node data named %q on rank %d", name, x.rank)
				}
				nt := x.nameType(name)
				sel := rows
				if nt >= 0 {
					sel = x.typedRows(x.rank, nt, rows)
				}
				at := len(out)
				out = append(out, make([]byte, len(sel)*t.RowBytes())...)
				if nt >= 0 {
					err = feature.Gather(out[at:], t, sel, threads)
				} else {
					err = store.Gather(name, out[at:], sel, threads)
				}
				if err != nil {
					return err
				}
			}
		}
		answers[q] = mem.HostBuffer(out)
	}
	back, err := c.AllToAll(ctx, x.rank, answers, mem.NoStream)
	if err != nil {
		return err
	}
	// The type of every node and its rank among the batch's nodes of its
	// type (typed parts only).
	var ntype []int
	var rank []int64
	var count []int64
	if x.typeStart != nil && hasTyped(x.nameType, featureNames, labelNames) {
		ntype, rank = make([]int, len(nodes)), make([]int64, len(nodes))
		count = make([]int64, len(x.typeStart[0])-1)
		for i, v := range nodes {
			q := x.owner(v)
			ntype[i] = typeAt(x.typeStart[q], v-x.offsets[q])
			rank[i] = count[ntype[i]]
			count[ntype[i]]++
		}
	}
	// Scatter the answers into the batch's tensors.
	offs := make([]int, size)
	if ids {
		orig := mem.Int64s(b.Nodes.Data)
		if len(orig) != len(nodes) {
			return fmt.Errorf("the batch holds %d node ids for %d nodes", len(orig), len(nodes))
		}
		for q := range size {
			raw := back[q].Bytes()
			if len(raw) < 8*len(ws[q].featAt) {
				return fmt.Errorf("rank %d answered %d bytes, fewer than the original ids of the %d nodes asked", q, len(raw), len(ws[q].featAt))
			}
			for m, i := range ws[q].featAt {
				orig[i] = int64(binary.LittleEndian.Uint64(raw[8*m:]))
			}
			offs[q] = 8 * len(ws[q].featAt)
		}
	}
	for k, list := range [][]string{featureNames, labelNames} {
		n := len(nodes)
		if k == 1 {
			n = nb
		}
		for _, name := range list {
			src, _ := store.Get(name)
			rb := src.RowBytes()
			nt := x.nameType(name)
			rows := n
			if nt >= 0 {
				rows = 0
				for _, ty := range ntype[:n] {
					if ty == nt {
						rows++
					}
				}
			}
			t, err := b.AddNodeData(name, src.DType, rows, src.Shape[1:])
			if err != nil {
				return err
			}
			for q := range size {
				at := ws[q].featAt
				if k == 1 {
					at = ws[q].labelAt
				}
				raw := back[q].Bytes()
				m := 0 // rows of this name answered by q
				for _, i := range at {
					dst := int64(i)
					if nt >= 0 {
						if ntype[i] != nt {
							continue
						}
						dst = rank[i]
					}
					if offs[q]+(m+1)*rb > len(raw) {
						return fmt.Errorf("rank %d answered %d bytes of rows, fewer than asked", q, len(raw))
					}
					copy(t.Data[dst*int64(rb):(dst+1)*int64(rb)], raw[offs[q]+m*rb:])
					m++
				}
				offs[q] += m * rb
			}
		}
	}
	for q := range size {
		if offs[q] != back[q].Len() {
			return fmt.Errorf("rank %d answered %d bytes of rows, want %d", q, back[q].Len(), offs[q])
		}
	}
	return nil
}
