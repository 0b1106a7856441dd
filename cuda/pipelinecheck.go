package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// checkData returns generated node data for n nodes: rows of several
// widths and dtypes (a 16-byte float16 row, the vectorised path; an odd
// 28-byte float32 row; 3-byte rows; int64 labels), kept as they are.
func checkData(n int64, r *rand.Rand) (*feature.Store, error) {
	store := feature.NewStore(n)
	for _, d := range []struct {
		name  string
		dtype mem.DType
		row   []int64
	}{{"feat", mem.Float32, []int64{7}}, {"half", mem.Float16, []int64{8}}, {"bytes", mem.Uint8, []int64{3}}, {"label", mem.Int64, nil}} {
		t := mem.Tensor{DType: d.dtype, Shape: append([]int64{n}, d.row...)}
		t.Data = make([]byte, int(n)*t.RowBytes())
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
		if err := store.Set(d.name, t, nil); err != nil {
			return nil, err
		}
	}
	return store, nil
}

// PipelineCheck runs epochs of pipelines over generated graphs with node
// data, for every scheme the GPU offers (checkSchemes) and three layouts
// (as SelfCheck): the device sampler stage with its batches in device
// memory and on the host, both gathering node data from a tiered Gatherer
// (degree policy, 30% of the nodes hot), and the mixed mode (the CPU
// engine's sampler, the Gatherer in the loader stage), each against the
// CPU engine's pipeline over a feature.Store. It returns an error naming
// the first difference: of the batches (keys, shuffle, blocks, ids, node
// data) or of the rows each tier served. schemes > 0 checks that many
// schemes only (spread over the list).
func PipelineCheck(dev Device, cfg CheckConfig, schemes int) (CheckReport, error) {
	var rep CheckReport
	r := rand.New(rand.NewPCG(cfg.Seed, 0x9e37))
	g, layouts, err := checkLayouts(cfg, r)
	if err != nil {
		return rep, err
	}
	store, err := checkData(g.NumNodes, r)
	if err != nil {
		return rep, err
	}
	seeds := make([]int64, min(int64(cfg.Batches*cfg.BatchSize), g.NumNodes))
	for i, v := range r.Perm(int(g.NumNodes))[:len(seeds)] {
		seeds[i] = int64(v)
	}
	all := checkSchemes()
	pick := all
	if schemes > 0 && schemes < len(all) {
		pick = nil
		for i := range schemes {
			pick = append(pick, all[i*len(all)/schemes])
		}
	}
	for li, layout := range layouts {
		// The layout's store: rows by its internal ids.
		lstore, err := permutedStore(store, layout)
		if err != nil {
			return rep, err
		}
		gat, err := NewGatherer(dev, lstore, GatherOptions{Policy: "degree", Graph: layout.Graph, Size: cache.Size{Fraction: 0.3}})
		if err != nil {
			return rep, fmt.Errorf("layout %d: gatherer: %w", li, err)
		}
		excluded := excludedThird(layout)
		for si, req := range pick {
			if req.ExcludeEdges != nil {
				req.ExcludeEdges = excluded
			}
			req.Seed = cfg.Seed + uint64(si)
			name := fmt.Sprintf("layout %d, fanouts %v replace=%v biased=%v exclude=%v frontier=%v", li, req.Fanouts, req.Replace,
				req.Biased, req.ExcludeEdges != nil, req.Frontier)
			n, err := checkPipelines(dev, layout, lstore, gat, seeds, req, cfg)
			if err != nil {
				_ = gat.Close()
				return rep, fmt.Errorf("%s: %w", name, err)
			}
			rep.Schemes++
			rep.Batches += n
		}
		if err := gat.Close(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// permutedStore returns store's data with rows in p's internal order.
func permutedStore(store *feature.Store, p *partition.Partitioned) (*feature.Store, error) {
	if p.NewToOld == nil {
		return store, nil
	}
	out := feature.NewStore(store.NumNodes())
	for _, name := range store.Names() {
		t, _ := store.Get(name)
		u := t
		u.Data = make([]byte, len(t.Data))
		if err := store.Gather(name, u.Data, p.NewToOld, 0); err != nil {
			return nil, err
		}
		if err := out.Set(name, u, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkPipelines runs two epochs of the CPU engine's pipeline and of the
// device ones, and compares them batch for batch. It returns the batches
// compared.
func checkPipelines(dev Device, p *partition.Partitioned, store *feature.Store, gat *Gatherer, seeds []int64, req sample.Request, cfg CheckConfig) (int, error) {
	opt := pipeline.Options{BatchSize: cfg.BatchSize, Shuffle: true, Seed: cfg.Seed ^ 0xabc, FeatureNames: []string{"feat", "half", "bytes"},
		LabelNames: []string{"label"}, Workers: 2}
	rt, err := sample.NewRuntime(p, comm.NewLocal(p.NumPatches()), sample.RuntimeOptions{Threads: 2})
	if err != nil {
		return 0, err
	}
	cpu, err := rt.Bind(req)
	if err != nil {
		return 0, err
	}
	want, err := pipeline.New(cpu, p, store, seeds, opt, nil)
	if err != nil {
		return 0, err
	}
	defer want.Close()
	type variant struct {
		name string
		pl   *pipeline.Pipeline
		s    *Sampler
	}
	var vs []variant
	defer func() {
		for _, v := range vs {
			v.pl.Close()
			if v.s != nil {
				v.s.Close()
			}
		}
	}()
	for _, out := range []Output{OutputDevice, OutputHost} {
		s, err := NewSampler(dev, p, req, SamplerOptions{Output: out, Placement: cfg.Placement})
		if err != nil {
			return 0, err
		}
		pl, err := pipeline.New(s, p, gat, seeds, opt, nil)
		if err != nil {
			s.Close()
			return 0, err
		}
		vs = append(vs, variant{[]string{"device", "host"}[out] + " output", pl, s})
	}
	mixed, err := pipeline.New(cpu, p, gat, seeds, opt, nil)
	if err != nil {
		return 0, err
	}
	vs = append(vs, variant{"mixed mode", mixed, nil})
	st, err := dev.NewStream()
	if err != nil {
		return 0, err
	}
	defer st.Close()
	batches := 0
	for epoch := range uint64(2) {
		if err := want.Start(epoch); err != nil {
			return 0, err
		}
		for _, v := range vs {
			if err := v.pl.Start(epoch); err != nil {
				return 0, err
			}
		}
		var wantHot int64
		for {
			w, err := want.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return 0, err
			}
			wantHot += expectedHot(w, p, gat, opt)
			for _, v := range vs {
				b, err := v.pl.Next(context.Background())
				if err != nil {
					w.Release()
					return 0, fmt.Errorf("%s: epoch %d: %w", v.name, epoch, err)
				}
				err = EqualBatches(st, w, b)
				b.ReleaseAfter(st.Handle())
				if err != nil {
					w.Release()
					return 0, fmt.Errorf("%s: epoch %d, batch %d: %w", v.name, epoch, w.Index, err)
				}
			}
			w.Release()
			batches++
		}
		for _, v := range vs {
			if _, err := v.pl.Next(context.Background()); !errors.Is(err, io.EOF) {
				return 0, fmt.Errorf("%s: epoch %d: more batches than the CPU engine's (%v)", v.name, epoch, err)
			}
			c := v.pl.Stats().Current.Gathered
			if c.HotRows != wantHot || c.Bytes[mem.KindHost] != 0 {
				return 0, fmt.Errorf("%s: epoch %d: %d rows from the hot tier, %d bytes from host memory; want %d and 0 (%+v)", v.name, epoch, c.HotRows, c.Bytes[mem.KindHost], wantHot, c)
			}
		}
	}
	return batches, nil
}

// expectedHot counts the rows of a batch (host, original ids) that the
// gatherer's hot tier holds: features over its nodes, labels over its
// seeds.
func expectedHot(b *pipeline.Batch, p *partition.Partitioned, gat *Gatherer, opt pipeline.Options) int64 {
	count := func(ids []int64) int64 {
		internal := slices.Clone(ids)
		if p.OldToNew != nil {
			for i, v := range ids {
				internal[i] = p.OldToNew[v]
			}
		}
		return gat.hotOf(internal)
	}
	return int64(len(opt.FeatureNames))*count(mem.Int64s(b.Nodes.Data)) + int64(len(opt.LabelNames))*count(mem.Int64s(b.Seeds.Data))
}

// ReadTensor returns t's bytes on the host: a host tensor's Data, or a
// device tensor's memory copied with st (which waits for the copy).
func ReadTensor(st Stream, t mem.Tensor) ([]byte, error) {
	if t.Device.Kind != mem.KindDevice {
		return t.Data, nil
	}
	buf := make([]byte, t.ByteSize())
	if err := st.CopyOut(buf, Ptr(t.DevicePtr)); err != nil {
		return nil, err
	}
	return buf, st.Sync()
}

// EqualBatches returns nil when got (host or device tensors; st reads the
// latter, after waiting for got's Ready event) is the batch want (host),
// else an error naming the first difference.
func EqualBatches(st Stream, want, got *pipeline.Batch) error {
	if err := st.Wait(got.Ready()); err != nil {
		return err
	}
	if want.Index != got.Index || want.Epoch != got.Epoch {
		return fmt.Errorf("batch (epoch %d, index %d) vs (epoch %d, index %d)", want.Epoch, want.Index, got.Epoch, got.Index)
	}
	eq := func(what string, a, b mem.Tensor) error {
		if a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) {
			return fmt.Errorf("%s: %v%v vs %v%v", what, a.DType, a.Shape, b.DType, b.Shape)
		}
		data, err := ReadTensor(st, b)
		if err != nil {
			return err
		}
		if !bytes.Equal(a.Data, data) {
			if a.DType == mem.Int64 {
				return fmt.Errorf("%s differ: %s", what, firstDiff(mem.Int64s(a.Data), mem.Int64s(data)))
			}
			return fmt.Errorf("%s differ", what)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		a, b mem.Tensor
	}{{"seeds", want.Seeds, got.Seeds}, {"input index", want.InputIndex, got.InputIndex}, {"nodes", want.Nodes, got.Nodes}, {"hop counts", want.HopCounts, got.HopCounts}} {
		if err := eq(f.name, f.a, f.b); err != nil {
			return err
		}
	}
	if len(want.Blocks) != len(got.Blocks) {
		return fmt.Errorf("%d vs %d blocks", len(want.Blocks), len(got.Blocks))
	}
	for h := range want.Blocks {
		x, y := &want.Blocks[h], &got.Blocks[h]
		if err := blockShape(h, [3]int64{x.NumDst, x.NumSrc, x.DstOffset}, [3]int64{y.NumDst, y.NumSrc, y.DstOffset}); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			a, b mem.Tensor
		}{{"indptr", x.Indptr, y.Indptr}, {"indices", x.Indices, y.Indices}, {"edge ids", x.EdgeIDs, y.EdgeIDs}} {
			if err := eq(fmt.Sprintf("block %d: %s", h, f.name), f.a, f.b); err != nil {
				return err
			}
		}
	}
	if len(want.NodeData) != len(got.NodeData) {
		return fmt.Errorf("node data %d vs %d arrays", len(want.NodeData), len(got.NodeData))
	}
	for name, a := range want.NodeData {
		b, ok := got.NodeData[name]
		if !ok {
			return fmt.Errorf("node data %q missing", name)
		}
		if err := eq(fmt.Sprintf("node data %q", name), a, b); err != nil {
			return err
		}
	}
	return nil
}
