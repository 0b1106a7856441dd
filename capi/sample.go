package main

/*
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"io"
	"math"
	"time"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// maxHops bounds the number of hops accepted from callers.
const maxHops = 64

// schemes are the engine's sampling schemes by their GF_SCHEME_* value: a
// new scheme is one line here.
var schemes = map[C.int32_t]sample.Scheme{
	C.GF_SCHEME_NODE_WISE:  sample.NodeWise,
	C.GF_SCHEME_LAYER_WISE: sample.LayerWise,
	C.GF_SCHEME_LABOR:      sample.Labor,
}

// sampleConfig is one gf_sample_options, read and checked once: the
// engine's request, the thread count (num_threads, which never changes a
// sample), and gf_sample's own seed times and allocator (a loader takes
// those from its gf_loader_options; it refuses an allocator here).
type sampleConfig struct {
	req       sample.Request
	threads   int
	seedTimes *C.DLTensor
	allocator *C.gf_allocator
}

// sampleOptions reads the gf_sample_options p (named arg) once.
func sampleOptions(p *C.gf_sample_options, arg string) (sampleConfig, error) {
	if p == nil {
		return sampleConfig{}, errorf(gfEInval, "%s is NULL", arg)
	}
	o, err := readOptions(p, arg, sampleOptionsLayout)
	if err != nil {
		return sampleConfig{}, err
	}
	req, threads, err := sampleRequest(o, arg)
	return sampleConfig{req: req, threads: threads, seedTimes: o.seed_times, allocator: (*C.gf_allocator)(unsafe.Pointer(o.allocator))}, err
}

// sampleRequest checks o (the caller's options, copied) and converts it.
func sampleRequest(o *C.gf_sample_options, arg string) (sample.Request, int, error) {
	var req sample.Request
	if o.allocator != nil && arg != "options" { // a loader's: gf_sample's own is "options"
		return req, 0, errorf(gfEInval, "%s->allocator is set: it is gf_sample's; a loader's tensors come from its options->allocator", arg)
	}
	if o.num_hops < 0 || o.num_hops > maxHops {
		return req, 0, errorf(gfEInval, "%s->num_hops = %d: the fan-out list must have 1 to %d entries (0 with GF_FRONTIER_NEW)", arg, int(o.num_hops), maxHops)
	}
	if o.num_hops == 0 && o.frontier != C.GF_FRONTIER_NEW {
		return req, 0, errorf(gfEInval, "%s->num_hops = 0: the fan-out list is empty; zero hops (the seeds alone) need frontier = GF_FRONTIER_NEW (GF_FRONTIER_ALL's blocks want 1 to %d hops)", arg, maxHops)
	}
	if o.relation_fanouts != nil {
		nr := int(o.num_relations)
		if nr < 1 || nr > maxTypes {
			return req, 0, errorf(gfEInval, "%s->num_relations = %d is out of range [1, %d] (relation_fanouts is set)", arg, nr, maxTypes)
		}
		flat := unsafe.Slice((*int32)(unsafe.Pointer(o.relation_fanouts)), int(o.num_hops)*nr)
		req.RelationFanouts = make([][]int, o.num_hops)
		for h := range req.RelationFanouts {
			row := make([]int, nr)
			for r := range row {
				f := flat[h*nr+r]
				if f < -1 {
					return req, 0, errorf(gfEInval, "%s->relation_fanouts[%d] (hop %d, relation %d) = %d is invalid (want >= 0, or -1 for all neighbours)", arg, h*nr+r, h, r, f)
				}
				row[r] = int(f)
			}
			req.RelationFanouts[h] = row
		}
	} else {
		if o.num_relations != 0 {
			return req, 0, errorf(gfEInval, "%s->num_relations = %d but relation_fanouts is NULL", arg, int(o.num_relations))
		}
		if o.fanouts == nil && o.num_hops > 0 {
			return req, 0, errorf(gfEInval, "%s->fanouts is NULL", arg)
		}
		for i, f := range unsafe.Slice((*int32)(unsafe.Pointer(o.fanouts)), int(o.num_hops)) {
			// 0 samples no neighbour in that hop; -1 all of them.
			if f < -1 {
				return req, 0, errorf(gfEInval, "%s->fanouts[%d] = %d is invalid (want >= 0, or -1 for all neighbours)", arg, i, f)
			}
			req.Fanouts = append(req.Fanouts, int(f))
		}
	}
	req.Replace = o.replace != 0
	switch o.frontier {
	case C.GF_FRONTIER_ALL:
		req.Frontier = sample.FrontierAll
	case C.GF_FRONTIER_NEW:
		req.Frontier = sample.FrontierNew
	default:
		return req, 0, errorf(gfEInval, "%s->frontier = %d (want GF_FRONTIER_ALL or GF_FRONTIER_NEW)", arg, int(o.frontier))
	}
	req.Seed = uint64(o.seed)
	scheme, ok := schemes[o.scheme]
	if !ok {
		return req, 0, errorf(gfEInval, "%s->scheme = %d (want a GF_SCHEME_* value: %v)", arg, int(o.scheme), schemes)
	}
	req.Scheme = scheme
	req.LayerDependency = o.layer_dependency != 0
	req.Disjoint = o.disjoint != 0
	switch o.temporal {
	case C.GF_TEMPORAL_NONE:
	case C.GF_TEMPORAL_NODE:
		req.Temporal = sample.TemporalNode
	case C.GF_TEMPORAL_EDGE:
		req.Temporal = sample.TemporalEdge
	default:
		return req, 0, errorf(gfEInval, "%s->temporal = %d (want GF_TEMPORAL_NONE, GF_TEMPORAL_NODE or GF_TEMPORAL_EDGE)", arg, int(o.temporal))
	}
	switch o.temporal_strategy {
	case C.GF_TEMPORAL_UNIFORM:
	case C.GF_TEMPORAL_LAST:
		req.TemporalStrategy = sample.TemporalLast
	default:
		return req, 0, errorf(gfEInval, "%s->temporal_strategy = %d (want GF_TEMPORAL_UNIFORM or GF_TEMPORAL_LAST)", arg, int(o.temporal_strategy))
	}
	req.Biased = o.biased != 0
	req.LayerWithoutReplacement = o.layer_without_replacement != 0
	if o.exclude_edges != nil {
		ex, err := indexArray(o.exclude_edges, arg+"->exclude_edges", false)
		if err != nil {
			return req, 0, err
		}
		req.ExcludeEdges = ex
	}
	if err := req.Validate(); err != nil {
		return req, 0, errorf(gfEInval, "%s: %v", arg, err)
	}
	return req, int(o.num_threads), nil
}

// sampleSeedTimes reads gf_sample's options->seed_times: required iff the
// request is temporal, one int64 per seed.
func sampleSeedTimes(o sampleConfig, numSeeds int) ([]int64, error) {
	if o.seedTimes == nil {
		if o.req.Temporal != sample.TemporalNone {
			return nil, errorf(gfEInval, "options->seed_times is NULL but options->temporal is set (want one time per seed)")
		}
		return nil, nil
	}
	if o.req.Temporal == sample.TemporalNone {
		return nil, errorf(gfEInval, "options->seed_times is set but options->temporal is GF_TEMPORAL_NONE")
	}
	return seedTimes(o.seedTimes, "options->seed_times", numSeeds)
}

// seedTimes copies t, a 1-D int64 tensor of numSeeds entries.
func seedTimes(t *C.DLTensor, arg string, numSeeds int) ([]int64, error) {
	v, err := int64Vector(t, arg)
	if err != nil {
		return nil, err
	}
	return append([]int64(nil), v...), checkTimes(v, arg, numSeeds)
}

// checkTimes checks that times (the tensor arg) holds numSeeds entries.
func checkTimes(times []int64, arg string, numSeeds int) error {
	if len(times) != numSeeds {
		return errorf(gfEInval, "%s has %d entries for %d seeds (want one time per seed)", arg, len(times), numSeeds)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Batches

type fieldKey struct{ field, layer int32 }

type batchObj struct {
	b     *pipeline.Batch
	taken map[fieldKey]bool
	names map[string]bool
	// dev is the device loader's session for a batch with device tensors
	// (device.go), consumer the stream its device memory is reused after.
	dev      *device.Session
	consumer mem.Stream
}

func newBatch(b *pipeline.Batch, out *C.uintptr_t) {
	newDeviceBatch(b, nil, out)
}

// newDeviceBatch is newBatch for a batch of a device loader (dev nil: a
// host loader's), delivered to dev by the loader's Next.
func newDeviceBatch(b *pipeline.Batch, dev *device.Session, out *C.uintptr_t) {
	o := &batchObj{b: b, taken: map[fieldKey]bool{}, names: map[string]bool{}, dev: dev}
	if dev != nil {
		o.consumer = dev.Consumer()
	}
	putHandle(out, newHandle(kindBatch, o))
}

// field returns the tensor of a batch field.
func (o *batchObj) field(field, layer int32) (*mem.Tensor, error) {
	perLayer := field == C.GF_FIELD_INDPTR || field == C.GF_FIELD_INDICES || field == C.GF_FIELD_EDGE_IDS ||
		(field >= C.GF_FIELD_TYPED_BLOCK_SHAPE && field <= C.GF_FIELD_TYPED_INDPTR)
	if perLayer {
		if layer < 0 || int(layer) >= len(o.b.Blocks) {
			return nil, errorf(gfEInval, "layer = %d is out of range [0, %d)", layer, len(o.b.Blocks))
		}
	} else if layer != 0 {
		return nil, errorf(gfEInval, "layer = %d: field %d is not per hop, layer must be 0", layer, field)
	}
	switch field {
	case C.GF_FIELD_NODES:
		return &o.b.Nodes, nil
	case C.GF_FIELD_HOP_COUNTS:
		return &o.b.HopCounts, nil
	case C.GF_FIELD_SEEDS:
		return &o.b.Seeds, nil
	case C.GF_FIELD_INPUT_INDEX:
		return &o.b.InputIndex, nil
	case C.GF_FIELD_INDPTR:
		return &o.b.Blocks[layer].Indptr, nil
	case C.GF_FIELD_INDICES:
		return &o.b.Blocks[layer].Indices, nil
	case C.GF_FIELD_EDGE_IDS:
		return &o.b.Blocks[layer].EdgeIDs, nil
	case C.GF_FIELD_BATCH:
		if o.b.Batch.Shape == nil {
			return nil, errorf(gfEInval, "field GF_FIELD_BATCH: the batch is not disjoint (sample with options->disjoint set)")
		}
		return &o.b.Batch, nil
	case C.GF_FIELD_COO_INDEX, C.GF_FIELD_COO_EDGE_IDS:
		c := o.b.COO
		if c == nil {
			return nil, errorf(gfEInval, "field %d (GF_FIELD_COO_*): the batch has no edge list (open the loader with options->coo set)", field)
		}
		if field == C.GF_FIELD_COO_INDEX {
			return &c.Index, nil
		}
		return &c.EdgeIDs, nil
	}
	if field >= C.GF_FIELD_TYPED_NODES && field <= C.GF_FIELD_TYPED_INDPTR {
		return o.typedField(field, layer)
	}
	return nil, errorf(gfEInval, "field = %d is not a GF_FIELD_* value", field)
}

// typedField returns a GF_FIELD_TYPED_* tensor (layer already checked).
func (o *batchObj) typedField(field, layer int32) (*mem.Tensor, error) {
	v := o.b.Typed
	if v == nil {
		return nil, errorf(gfEInval, "field %d (GF_FIELD_TYPED_*): the batch is not of a typed graph (see gf_graph_set_types)", field)
	}
	switch field {
	case C.GF_FIELD_TYPED_NODES:
		return &v.Nodes, nil
	case C.GF_FIELD_TYPED_ORDER:
		return &v.Order, nil
	case C.GF_FIELD_TYPED_NODE_OFFSETS:
		return &v.NodeOffsets, nil
	case C.GF_FIELD_TYPED_HOP_COUNTS:
		return &v.HopCounts, nil
	}
	tb := &v.Blocks[layer]
	switch field {
	case C.GF_FIELD_TYPED_BLOCK_SHAPE:
		return &tb.Shape, nil
	case C.GF_FIELD_TYPED_EDGE_OFFSETS:
		return &tb.EdgeOffsets, nil
	case C.GF_FIELD_TYPED_SRC:
		return &tb.Src, nil
	case C.GF_FIELD_TYPED_DST:
		return &tb.Dst, nil
	case C.GF_FIELD_TYPED_EDGE_IDS:
		return &tb.EdgeIDs, nil
	}
	return &tb.Indptr, nil
}

// take moves t out as a DLPack tensor; the batch no longer frees its data.
func take(t *mem.Tensor, out **C.DLManagedTensor) error {
	m, err := exportTensor(*t)
	if err != nil {
		return err
	}
	t.Data = nil
	*out = m
	return nil
}

//export gfgo_batch_num_hops
func gfgo_batch_num_hops(h C.uintptr_t, out *C.int32_t) C.int {
	return call("gf_batch_num_hops", func() error {
		b, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		*out = C.int32_t(len(b.b.Blocks))
		return nil
	})
}

//export gfgo_batch_block_shape
func gfgo_batch_block_shape(h C.uintptr_t, layer C.int32_t, numDst, numSrc, dstOffset *C.int64_t) C.int {
	return call("gf_batch_block_shape", func() error {
		b, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		if layer < 0 || int(layer) >= len(b.b.Blocks) {
			return errorf(gfEInval, "layer = %d is out of range [0, %d)", int(layer), len(b.b.Blocks))
		}
		blk := b.b.Blocks[layer]
		if numDst != nil {
			*numDst = C.int64_t(blk.NumDst)
		}
		if numSrc != nil {
			*numSrc = C.int64_t(blk.NumSrc)
		}
		if dstOffset != nil {
			*dstOffset = C.int64_t(blk.DstOffset)
		}
		return nil
	})
}

//export gfgo_batch_take
func gfgo_batch_take(h C.uintptr_t, field, layer C.int32_t, out **C.DLManagedTensor) C.int {
	return call("gf_batch_take", func() error {
		b, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_tensor is NULL")
		}
		*out = nil
		t, err := b.field(int32(field), int32(layer))
		if err != nil {
			return err
		}
		key := fieldKey{int32(field), int32(layer)}
		if b.taken[key] {
			return errorf(gfEState, "field %d (layer %d) was already taken from this batch", int32(field), int32(layer))
		}
		if err := b.takeOut(t, out); err != nil {
			return err
		}
		b.taken[key] = true
		return nil
	})
}

//export gfgo_batch_take_node_data
func gfgo_batch_take_node_data(h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return takeData("gf_batch_take_node_data", "node", h, name, out)
}

//export gfgo_batch_take_edge_data
func gfgo_batch_take_edge_data(h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return takeData("gf_batch_take_edge_data", "edge", h, name, out)
}

// takeData is gf_batch_take_node_data and gf_batch_take_edge_data: it moves
// the node or edge data (what) gathered under name out of the batch.
func takeData(fn, what string, h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return call(fn, func() error {
		b, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		n, err := goString(name, "name")
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_tensor is NULL")
		}
		*out = nil
		data, key := b.b.NodeData, n
		if what == "edge" {
			// A key no C string can spell: edge and node data names are
			// apart.
			data, key = b.b.EdgeData, "\x00edge/"+n
		}
		if b.names[key] {
			return errorf(gfEState, "%s data %q was already taken from this batch", what, n)
		}
		t, ok := data[n]
		if !ok {
			return errorf(gfEInval, "this batch has no %s data named %q", what, n)
		}
		if err := b.takeOut(&t, out); err != nil {
			return err
		}
		data[n] = t
		b.names[key] = true
		return nil
	})
}

//export gfgo_batch_close
func gfgo_batch_close(h C.uintptr_t) {
	call("gf_batch_close", func() error {
		if b, ok := forget[*batchObj](kindBatch, h); ok {
			b.release()
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// Synchronous sampling

//export gfgo_sample
func gfgo_sample(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_sample_options, out *C.uintptr_t) C.int {
	return sampleKeyed("gf_sample", h, seedsT, o, 0, out)
}

//export gfgo_sample_keyed
func gfgo_sample_keyed(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_sample_options, key C.uint64_t, out *C.uintptr_t) C.int {
	return sampleKeyed("gf_sample_keyed", h, seedsT, o, key, out)
}

// sampleKeyed is gf_sample (key 0) and gf_sample_keyed.
func sampleKeyed(fn string, h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_sample_options, key C.uint64_t, out *C.uintptr_t) C.int {
	return call(fn, func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_batch is NULL")
		}
		*out = 0
		so, err := sampleOptions(o, "options")
		if err != nil {
			return err
		}
		req, threads := so.req, so.threads
		seeds, err := indexArray(seedsT, "seeds", false)
		if err != nil {
			return err
		}
		times, err := sampleSeedTimes(so, len(seeds))
		if err != nil {
			return err
		}
		alloc, err := readAllocator(so.allocator, "options->allocator")
		if err != nil {
			return err
		}
		defer alloc.release() // the batch's blocks hold references of their own
		ctx, end := callContext()
		defer end()
		b, err := g.SampleKeyedContext(ctx, seeds, times, req, uint64(key), threads, alloc)
		if err != nil {
			return cancelled(ctx, err)
		}
		newBatch(b, out)
		return nil
	})
}

// ---------------------------------------------------------------------------
// Loaders

func cStrings(p **C.char, n C.int32_t, arg string) ([]string, error) {
	if n < 0 {
		return nil, errorf(gfEInval, "num_%s = %d is negative", arg, int(n))
	}
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, errorf(gfEInval, "%s is NULL but num_%s = %d", arg, arg, int(n))
	}
	var out []string
	for i, s := range unsafe.Slice(p, int(n)) {
		if s == nil {
			return nil, errorf(gfEInval, "%s[%d] is NULL", arg, i)
		}
		out = append(out, C.GoString(s))
	}
	return out, nil
}

// loaderConfig is one gf_loader_options, read and checked once at the
// boundary: the engine's batching options, the device, and what each kind
// of loader checks for itself (its sample options, the seed times, copied,
// nil for NULL) or takes when it opens (the allocator).
type loaderConfig struct {
	opts      pipeline.Options
	sample    *C.gf_sample_options
	seedTimes []int64
	dev       *device.Options // nil: host memory
	allocator *C.gf_allocator
}

// loaderOptions reads the gf_loader_options p (named arg) once;
// allowDevice false refuses kDLCUDA (only gf_loader_open offers it).
func loaderOptions(p *C.gf_loader_options, arg string, allowDevice bool) (loaderConfig, error) {
	var cfg loaderConfig
	if p == nil {
		return cfg, errorf(gfEInval, "%s is NULL", arg)
	}
	o, err := readOptions(p, arg, loaderOptionsLayout)
	if err != nil {
		return cfg, err
	}
	if cfg.opts, err = batchOptions(o, arg); err != nil {
		return cfg, err
	}
	if o.seed_times != nil {
		v, err := int64Vector(o.seed_times, arg+"->seed_times")
		if err != nil {
			return cfg, err
		}
		cfg.seedTimes = append([]int64{}, v...)
	}
	cfg.dev, err = readDeviceOptions(o, arg, allowDevice)
	cfg.sample, cfg.allocator = o.sample, o.allocator
	return cfg, err
}

// loaderArgs reads the arguments of gf_loader_open, gf_loader_open_comm
// and gf_loader_open_part: the graph, the seeds and the loader options
// (with their sample options and seed times); out is cleared first.
func loaderArgs(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_loader_options, out *C.uintptr_t, allowDevice bool) (*core.Graph, []int64, sample.Request, loaderConfig, error) {
	var req sample.Request
	var cfg loaderConfig
	g, err := lookup[*core.Graph](kindGraph, h)
	if err != nil {
		return nil, nil, req, cfg, err
	}
	if out == nil {
		return nil, nil, req, cfg, errorf(gfEInval, "out_loader is NULL")
	}
	*out = 0
	if cfg, err = loaderOptions(o, "options", allowDevice); err != nil {
		return nil, nil, req, cfg, err
	}
	so, err := sampleOptions(cfg.sample, "options->sample")
	if err != nil {
		return nil, nil, req, cfg, err
	}
	req = so.req
	seeds, err := indexArray(seedsT, "seeds", false)
	if err != nil {
		return nil, nil, req, cfg, err
	}
	switch {
	case cfg.seedTimes != nil && req.Temporal == sample.TemporalNone:
		return nil, nil, req, cfg, errorf(gfEInval, "options->seed_times is set but options->sample->temporal is GF_TEMPORAL_NONE")
	case cfg.seedTimes == nil && req.Temporal != sample.TemporalNone:
		return nil, nil, req, cfg, errorf(gfEInval, "options->seed_times is NULL but options->sample->temporal is set (a temporal loader needs one time per seed)")
	}
	if cfg.seedTimes != nil {
		if err := checkTimes(cfg.seedTimes, "options->seed_times", len(seeds)); err != nil {
			return nil, nil, req, cfg, err
		}
	}
	cfg.opts.SeedTimes, cfg.opts.Threads = cfg.seedTimes, so.threads
	return g, seeds, req, cfg, nil
}

// batchOptions reads what gf_loader_options (arg, copied by readOptions)
// says of batching: batch size, shuffle, queue, the node
// data names and whether batches carry their edge list (coo).
func batchOptions(o *C.gf_loader_options, arg string) (pipeline.Options, error) {
	if o.batch_size <= 0 {
		return pipeline.Options{}, errorf(gfEInval, "%s->batch_size = %d (want > 0)", arg, int64(o.batch_size))
	}
	features, err := cStrings((**C.char)(unsafe.Pointer(o.feature_names)), o.num_feature_names, "feature_names")
	if err != nil {
		return pipeline.Options{}, err
	}
	labels, err := cStrings((**C.char)(unsafe.Pointer(o.label_names)), o.num_label_names, "label_names")
	if err != nil {
		return pipeline.Options{}, err
	}
	edges := map[C.int32_t]pipeline.COOEdges{
		0: pipeline.SampledEdges, C.GF_COO_SAMPLED: pipeline.SampledEdges,
		C.GF_COO_BIDIRECTIONAL: pipeline.BidirectionalEdges, C.GF_COO_INDUCED: pipeline.InducedEdges,
		C.GF_COO_SUBGRAPH: pipeline.SubgraphEdges,
	}
	cooEdges, ok := edges[o.coo]
	if !ok {
		return pipeline.Options{}, errorf(gfEInval, "%s->coo = %d (want 0, GF_COO_SAMPLED, GF_COO_BIDIRECTIONAL, GF_COO_INDUCED or GF_COO_SUBGRAPH)", arg, int32(o.coo))
	}
	return pipeline.Options{
		BatchSize:     int(o.batch_size),
		Shuffle:       o.shuffle != 0,
		DropLast:      o.drop_last != 0,
		Seed:          uint64(o.shuffle_seed),
		QueueCapacity: int(o.queue_capacity),
		FeatureNames:  features,
		LabelNames:    labels,
		COO:           o.coo != 0,
		COOEdges:      cooEdges,
	}, nil
}

//export gfgo_loader_open
func gfgo_loader_open(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_loader_options, out *C.uintptr_t) C.int {
	return call("gf_loader_open", func() error {
		_ = drainDevice()
		g, seeds, req, cfg, err := loaderArgs(h, seedsT, o, out, true)
		if err != nil {
			return err
		}
		a, err := readAllocator(cfg.allocator, "options->allocator")
		if err != nil {
			return err
		}
		l, err := g.OpenLoaderOn(cfg.dev, seeds, req, cfg.opts, a)
		if err != nil {
			a.release()
			return err
		}
		putLoader(out, l, a)
		return nil
	})
}

//export gfgo_loader_num_batches
func gfgo_loader_num_batches(h C.uintptr_t, out *C.int64_t) C.int {
	return call("gf_loader_num_batches", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		*out = C.int64_t(l.NumBatches())
		return nil
	})
}

//export gfgo_loader_start
func gfgo_loader_start(h C.uintptr_t, epoch C.uint64_t) C.int {
	return call("gf_loader_start", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		return l.Start(uint64(epoch))
	})
}

//export gfgo_loader_start_at
func gfgo_loader_start_at(h C.uintptr_t, epoch C.uint64_t, first C.int64_t) C.int {
	return call("gf_loader_start_at", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if n := int64(l.NumBatches()); first < 0 || int64(first) > n {
			return errorf(gfEInval, "first_batch = %d is outside [0, %d] (the epoch has %d batches)", int64(first), n, n)
		}
		return l.StartAt(uint64(epoch), int(first))
	})
}

//export gfgo_loader_start_ordered
func gfgo_loader_start_ordered(h C.uintptr_t, epoch C.uint64_t, first C.int64_t, orderT *C.DLTensor) C.int {
	return call("gf_loader_start_ordered", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if n := int64(l.NumBatches()); first < 0 || int64(first) > n {
			return errorf(gfEInval, "first_batch = %d is outside [0, %d] (the epoch has %d batches)", int64(first), n, n)
		}
		if orderT == nil {
			return errorf(gfEInval, "order is NULL (gf_loader_start_at starts an epoch in the loader's own order)")
		}
		order, err := indexArray(orderT, "order", false)
		if err != nil {
			return err
		}
		return l.StartOrdered(uint64(epoch), int(first), order)
	})
}

//export gfgo_loader_position
func gfgo_loader_position(h C.uintptr_t, outEpoch *C.uint64_t, outDelivered *C.int64_t, outStarted *C.int32_t) C.int {
	return call("gf_loader_position", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if outEpoch == nil || outDelivered == nil {
			return errorf(gfEInval, "out_epoch or out_delivered is NULL")
		}
		e, k, started := l.Position()
		if !started {
			e = 0
		}
		*outEpoch, *outDelivered = C.uint64_t(e), C.int64_t(k)
		if outStarted != nil {
			*outStarted = cBool(started)
		}
		return nil
	})
}

//export gfgo_loader_next
func gfgo_loader_next(h C.uintptr_t, out *C.uintptr_t) C.int {
	return loaderNext("gf_loader_next", h, -1, out)
}

//export gfgo_loader_next_wait
func gfgo_loader_next_wait(h C.uintptr_t, timeoutMs C.int64_t, out *C.uintptr_t) C.int {
	return loaderNext("gf_loader_next_wait", h, int64(timeoutMs), out)
}

// loaderNext is gf_loader_next (timeoutMs < 0) and gf_loader_next_wait:
// it waits for the next batch at most timeoutMs milliseconds.
func loaderNext(fn string, h C.uintptr_t, timeoutMs int64, out *C.uintptr_t) C.int {
	return call(fn, func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_batch is NULL")
		}
		*out = 0
		if timeoutMs == 0 {
			return errorf(gfEInval, "timeout_ms = 0: wait at least 1 ms, or pass -1 to wait as gf_loader_next does")
		}
		ctx := context.Background()
		if timeoutMs > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(min(timeoutMs, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond)
			defer cancel()
		}
		dev := l.Device()
		if dev != nil {
			if err := drainDevice(); err != nil {
				return err
			}
		}
		b, err := l.Next(ctx) // a device loader's: delivered to dev
		switch {
		case errors.Is(err, io.EOF):
			return errDone
		case errors.Is(err, core.ErrNotStarted):
			return errorf(gfEState, "no epoch was started: call gf_loader_start first")
		case errors.Is(err, core.ErrClosedWhileWaiting):
			return errorf(gfEBadHandle, "the loader was closed (gf_loader_close on another thread) while this call waited for a batch; the handle is no longer valid")
		case errors.Is(err, core.ErrLoaderClosed):
			// Closed on another thread between the lookup and the wait:
			// what a call after the close says.
			_, err := lookup[*core.Loader](kindLoader, h)
			return err
		case err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
			return errNotReady
		case err != nil:
			return err
		}
		newDeviceBatch(b, dev, out)
		return nil
	})
}

//export gfgo_loader_close
func gfgo_loader_close(h C.uintptr_t) {
	call("gf_loader_close", func() error {
		l, ok := forget[*core.Loader](kindLoader, h)
		if !ok {
			return nil
		}
		var err error
		if l.Device() != nil {
			err = drainDevice()
		}
		err = errors.Join(err, l.Close()) // a device loader's closer is its device.Session
		releaseLoaderAlloc(h)
		C.gf__buf_pool_use(-1) // the last loader closed empties the pool
		return err
	})
}

// ---------------------------------------------------------------------------
// Random walks

//export gfgo_random_walk
func gfgo_random_walk(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_walk_options, outTraces, outEdges **C.DLManagedTensor) C.int {
	return call("gf_random_walk", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if outTraces == nil {
			return errorf(gfEInval, "out_traces is NULL")
		}
		*outTraces = nil
		if outEdges != nil {
			*outEdges = nil
		}
		if o == nil {
			return errorf(gfEInval, "options is NULL")
		}
		o, err := readOptions(o, "options", walkOptionsLayout)
		if err != nil {
			return err
		}
		length := int(o.length)
		if length < 0 {
			return errorf(gfEInval, "options->length = %d is negative", length)
		}
		p := float64(o.restart_prob)
		if !(p >= 0 && p <= 1) {
			return errorf(gfEInval, "options->restart_prob = %g is not in [0, 1]", p)
		}
		seeds, err := indexArray(seedsT, "seeds", false)
		if err != nil {
			return err
		}
		ctx, end := callContext()
		defer end()
		w, err := g.RandomWalkContext(ctx, seeds, sample.WalkRequest{
			Length:      length,
			RestartProb: p,
			Biased:      o.biased != 0,
			Seed:        uint64(o.seed),
		}, int(o.num_threads), cAlloc{})
		if err != nil {
			return cancelled(ctx, err)
		}
		tt, err := exportTensor(w.Traces)
		if err != nil {
			cAlloc{}.Free(w.Traces.Data)
			cAlloc{}.Free(w.EdgeIDs.Data)
			return err
		}
		if outEdges == nil {
			cAlloc{}.Free(w.EdgeIDs.Data)
		} else {
			et, err := exportTensor(w.EdgeIDs)
			if err != nil {
				C.gf__call_deleter(tt)
				cAlloc{}.Free(w.EdgeIDs.Data)
				return err
			}
			*outEdges = et
		}
		*outTraces = tt
		return nil
	})
}
