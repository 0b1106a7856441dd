package cuda

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// SampleMaterialized samples a pipeline worker's wave and makes its batches
// (pipeline.Materializer): OutputDevice batches with every tensor in device
// memory but HopCounts, or OutputHost batches copied from the device into
// the allocator's buffers. Node data is gathered on the device from the
// pipeline's store when it is a Gatherer of this device; with OutputHost
// any other store is left to the loader stage, with OutputDevice it is an
// error.
func (s *Sampler) SampleMaterialized(ctx context.Context, req pipeline.MaterializeRequest) ([]pipeline.Materialized, error) {
	if err := s.checkBatches(req.Batches, req.Keys); err != nil {
		return nil, err
	}
	if len(req.Seeds) != len(req.Batches) || len(req.InputIndex) != len(req.Batches) {
		return nil, errors.New("cuda: a wave's seeds or input positions do not match its batches")
	}
	g, _ := req.Store.(*Gatherer)
	if g != nil && g.dev != s.sh.dev {
		g = nil
	}
	nodeData := len(req.FeatureNames) > 0 || len(req.LabelNames) > 0
	if nodeData && g != nil {
		for _, name := range append(append([]string(nil), req.FeatureNames...), req.LabelNames...) {
			if _, ok := g.tiers[name]; !ok {
				g = nil // a name the gatherer leaves to the host
			}
		}
	}
	device := s.sh.opts.Output == OutputDevice
	if nodeData && device && g == nil {
		return nil, fmt.Errorf("cuda: batches in device memory gather their node data on the device: the pipeline's store (%T) must be a cuda.Gatherer of this device with tiers for %v %v", req.Store, req.FeatureNames, req.LabelNames)
	}
	out := make([]pipeline.Materialized, 0, len(req.Batches))
	fail := func(err error) ([]pipeline.Materialized, error) {
		for _, m := range out {
			m.Batch.Release()
		}
		return nil, err
	}
	for i, seeds := range req.Batches {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if len(req.Seeds[i]) != len(seeds) || len(req.InputIndex[i]) != len(seeds) {
			return fail(fmt.Errorf("cuda: batch %d has %d seeds but %d original ids and %d positions", i, len(seeds), len(req.Seeds[i]), len(req.InputIndex[i])))
		}
		in := batchInput{seeds: seeds, key: req.Keys[i]}
		if nodeData && len(req.FeatureNames) > 0 {
			in.hot = g
		}
		if device {
			in.seedsOrig, in.pos = req.Seeds[i], req.InputIndex[i]
		}
		d, up, err := s.sampleDevice(in)
		if err != nil {
			return fail(err)
		}
		var m pipeline.Materialized
		if device {
			m, err = s.deviceBatch(d, up, req, i, g)
		} else {
			m, err = s.hostBatch(d, req, i, g)
		}
		d.m.release()
		if err != nil {
			return fail(err)
		}
		out = append(out, m)
	}
	return out, nil
}

// nodeDataShape returns the batch tensor of name over rows rows (device
// memory at p) and its row bytes.
func nodeDataTensor(tr *tier, rows int64, p Ptr, ordinal int) mem.Tensor {
	shape := append([]int64{rows}, tr.t.Shape[1:]...)
	return mem.TensorIn(mem.DeviceBuffer(uintptr(p), int(rows*tr.rowBytes), ordinal), tr.t.DType, shape)
}

// deviceBatch makes d a batch of device tensors, gathering its node data
// on the device (after the batch's synchronisation, on its stream: the
// batch's Ready event follows it).
func (s *Sampler) deviceBatch(d *devBatch, up uploads, req pipeline.MaterializeRequest, i int, g *Gatherer) (m pipeline.Materialized, err error) {
	ord := s.sh.dev.Ordinal()
	ev, err := s.pool.Event()
	if err != nil {
		return m, err
	}
	b := pipeline.NewDeviceBatch(req.Alloc, s.pool.Allocator(ord), s.st.Handle(), ev.Handle(), func() { s.pool.PutEvent(ev) })
	defer func() {
		if err != nil {
			b.Release()
		}
	}()
	nh := int64(len(d.hops))
	n, nb := d.numNodes(), d.sz[1]
	dev := func(p Ptr, len int64) mem.Tensor {
		d.m.take(p)
		return mem.TensorIn(mem.DeviceBuffer(uintptr(p), int(len*8), ord), mem.Int64, []int64{len})
	}
	b.Seeds, b.InputIndex = dev(up.seedsOrig, nb), dev(up.pos, nb)
	nodes := d.nodes
	if s.sh.p.NewToOld != nil {
		if nodes, err = d.m.get(n * 8); err != nil {
			return m, err
		}
		if err := launch(s.st, "gf_map_ids", n, uint64(s.sh.topo.ptrs[wNew2Old]), uint64(d.nodes), uint64(s.szPtr(nh+1)), uint64(nodes)); err != nil {
			return m, err
		}
	}
	b.Nodes = dev(nodes, n)
	if b.HopCounts, err = hostInt64s(req.Alloc, s.hopCounts(d)); err != nil {
		return m, err
	}
	b.Blocks = make([]pipeline.Block, nh)
	for h, o := range d.hops {
		off, nd, ns, e := s.hopShape(d, h)
		b.Blocks[h] = pipeline.Block{Indptr: dev(o.indptr, nd+1), Indices: dev(o.indices, e), EdgeIDs: dev(o.eids, e),
			NumDst: nd, NumSrc: ns, DstOffset: off}
	}
	// Node data, the ids the internal ones still in d.nodes (the stream
	// runs these gathers before any later reuse of them).
	if err := s.gatherNodeData(d, g, req, i, &m.Rows, func(name string, tr *tier, rows int64, out Ptr) error {
		d.m.take(out)
		b.NodeData[name] = nodeDataTensor(tr, rows, out, ord)
		return nil
	}); err != nil {
		return m, err
	}
	if err := ev.RecordOn(s.st.Handle()); err != nil {
		return m, err
	}
	m.Batch = b
	return m, nil
}

// gatherNodeData queues on s's stream the gathers of the request's node
// data of batch i (features over all of d's nodes, labels over its seeds)
// from g into device memory, hands each output to put and adds where the
// rows came from to rows.
func (s *Sampler) gatherNodeData(d *devBatch, g *Gatherer, req pipeline.MaterializeRequest, i int, rows *feature.TierCounts,
	put func(name string, tr *tier, rows int64, out Ptr) error) error {
	if len(req.FeatureNames) == 0 && len(req.LabelNames) == 0 {
		return nil
	}
	nh := int64(len(d.hops))
	for _, set := range []struct {
		names []string
		rows  int64
		count Ptr
		hot   int64
	}{{req.FeatureNames, d.numNodes(), s.szPtr(nh + 1), d.hot}, {req.LabelNames, d.sz[1], s.szPtr(1), g.hotOf(req.Batches[i])}} {
		for _, name := range set.names {
			tr := g.tiers[name]
			out, err := d.m.get(set.rows * tr.rowBytes)
			if err != nil {
				return err
			}
			if err := g.gatherOn(s.st, tr, d.nodes, set.count, set.rows, out, s.meta); err != nil {
				return err
			}
			if err := put(name, tr, set.rows, out); err != nil {
				return err
			}
			hot := set.hot
			if tr.hot == 0 {
				hot = 0
			}
			rows.Add(tierCounts(hot, set.rows, tr.rowBytes))
		}
	}
	return nil
}

// hopCounts returns d's hop counts: the seeds, then each hop's new nodes.
func (s *Sampler) hopCounts(d *devBatch) []int64 {
	hc := make([]int64, len(d.hops)+1)
	hc[0] = d.sz[1]
	for h := range d.hops {
		hc[h+1] = d.sz[h+2] - d.sz[h+1]
	}
	return hc
}

// hostInt64s allocates a 1-D int64 host tensor holding src from alloc.
func hostInt64s(alloc mem.Allocator, src []int64) (mem.Tensor, error) {
	t, err := hostTensor(alloc, int64(len(src)))
	if err == nil {
		copy(mem.Int64s(t.Data), src)
	}
	return t, err
}

// hostTensor allocates a 1-D int64 host tensor of n values from alloc.
func hostTensor(alloc mem.Allocator, n int64) (mem.Tensor, error) {
	buf, err := alloc.Alloc(int(n * 8))
	if err != nil {
		return mem.Tensor{}, err
	}
	return mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: buf}, nil
}

// hostBatch copies d into a batch of the allocator's buffers (one wait
// for every copy), node data gathered on the device first when g can.
func (s *Sampler) hostBatch(d *devBatch, req pipeline.MaterializeRequest, i int, g *Gatherer) (m pipeline.Materialized, err error) {
	b := pipeline.NewDeviceBatch(req.Alloc, nil, mem.NoStream, mem.NoEvent, nil)
	defer func() {
		if err != nil {
			b.Release()
		}
	}()
	nh := len(d.hops)
	n := d.numNodes()
	if b.Seeds, err = hostInt64s(req.Alloc, req.Seeds[i]); err != nil {
		return m, err
	}
	if b.InputIndex, err = hostInt64s(req.Alloc, req.InputIndex[i]); err != nil {
		return m, err
	}
	if b.HopCounts, err = hostInt64s(req.Alloc, s.hopCounts(d)); err != nil {
		return m, err
	}
	if b.Nodes, err = hostTensor(req.Alloc, n); err != nil {
		return m, err
	}
	dst := hostDst{nodes: mem.Int64s(b.Nodes.Data), indptr: make([][]int64, nh), indices: make([][]int64, nh), eids: make([][]int64, nh)}
	b.Blocks = make([]pipeline.Block, nh)
	for h := range nh {
		off, nd, ns, e := s.hopShape(d, h)
		blk := &b.Blocks[h]
		blk.NumDst, blk.NumSrc, blk.DstOffset = nd, ns, off
		for _, t := range []struct {
			t   *mem.Tensor
			len int64
			dst *[]int64
		}{{&blk.Indptr, nd + 1, &dst.indptr[h]}, {&blk.Indices, e, &dst.indices[h]}, {&blk.EdgeIDs, e, &dst.eids[h]}} {
			if *t.t, err = hostTensor(req.Alloc, t.len); err != nil {
				return m, err
			}
			*t.dst = mem.Int64s(t.t.Data)
		}
	}
	if err := s.queueCopies(d, dst); err != nil {
		return m, err
	}
	nodeData := len(req.FeatureNames) > 0 || len(req.LabelNames) > 0
	if nodeData && g != nil {
		if err := s.gatherNodeData(d, g, req, i, &m.Rows, func(name string, tr *tier, rows int64, out Ptr) error {
			t, err := b.AddNodeData(name, tr.t.DType, int(rows), tr.t.Shape[1:])
			if err != nil {
				return err
			}
			return s.st.CopyOut(t.Data, out)
		}); err != nil {
			return m, err
		}
	}
	if err := s.st.Sync(); err != nil {
		return m, err
	}
	nodes := dst.nodes
	if nodeData && g == nil {
		// The loader stage gathers over the internal ids.
		m.Result = &sample.Result{Nodes: append([]int64(nil), nodes...), HopCounts: s.hopCounts(d)}
	}
	if p := s.sh.p.NewToOld; p != nil {
		for j, v := range nodes {
			nodes[j] = p[v]
		}
	}
	m.Batch = b
	return m, nil
}
