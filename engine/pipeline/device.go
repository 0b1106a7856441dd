package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// Device outputs: the seam through which a device backend's sampler stage
// streams batches that it materializes itself, with tensors in device
// memory (or copied straight from the device into the allocator's
// buffers), through the same pipeline (batch keys, epoch shuffle, workers,
// queues, statistics) as the CPU sampler.

// Materializer is implemented by the forks of a BatchSampler that make
// their batches themselves. A worker whose fork implements it calls
// SampleMaterialized instead of SampleBatches and the copy of each result
// into allocator buffers; the loader stage then gathers node data only for
// the batches whose Materialized.Result is set.
type Materializer interface {
	SampleMaterialized(ctx context.Context, req MaterializeRequest) ([]Materialized, error)
}

// MaterializeRequest is one wave of batches for a Materializer.
type MaterializeRequest struct {
	// Batches are the waves' seeds (internal ids) and Keys their
	// random-stream keys, as given to SampleBatches.
	Batches [][]int64
	Keys    []uint64
	// Seeds are the same seeds in original ids and InputIndex their
	// positions in the pipeline's seed array: Batch.Seeds and
	// Batch.InputIndex.
	Seeds, InputIndex [][]int64
	// Alloc is the pipeline's allocator, for the batch's host tensors.
	Alloc mem.Allocator
	// Store is the pipeline's source of node data (nil when none is
	// requested), FeatureNames and LabelNames what is requested of it.
	Store                    feature.Gatherer
	FeatureNames, LabelNames []string
}

// Materialized is one batch of a Materializer.
type Materialized struct {
	// Batch is the batch, topology (and node data when the materializer
	// gathered it) included; Index and Epoch are set by the pipeline.
	Batch *Batch
	// Result, when not nil, is the batch's sample on the host (internal
	// ids): the materializer left the node data to the loader stage, which
	// gathers it from the store over Result.Nodes, then recycles Result to
	// the worker.
	Result *sample.Result
	// Rows says where the node data came from when the materializer
	// gathered it.
	Rows feature.TierCounts
}

// deviceOut is what a batch with device tensors holds beyond its host
// allocator: where its device memory goes back, the stream it was produced
// on and the event its consumer waits for.
type deviceOut struct {
	alloc  mem.BufferAllocator
	stream mem.Stream
	ready  mem.Event
	done   func() // gives the event back; nil once called
	after  mem.Stream
}

// NewDeviceBatch returns an empty batch for a device backend to fill: its
// host tensors come from alloc (as every batch's), its device tensors
// (Device.Kind == mem.KindDevice) from dev, which Release gives them back
// to. The batch's work was queued on stream; ready is an event recorded on
// stream after the last of it (mem.NoEvent: the work is complete); done,
// when not nil, is called once by Release (to give the event back).
func NewDeviceBatch(alloc mem.Allocator, dev mem.BufferAllocator, stream mem.Stream, ready mem.Event, done func()) *Batch {
	if alloc == nil {
		alloc = mem.Heap{}
	}
	return &Batch{alloc: alloc, NodeData: map[string]mem.Tensor{},
		dev: &deviceOut{alloc: dev, stream: stream, ready: ready, done: done}}
}

// Stream returns the stream a batch with device tensors was produced on
// (mem.NoStream for a host batch).
func (b *Batch) Stream() mem.Stream {
	if b == nil || b.dev == nil {
		return mem.NoStream
	}
	return b.dev.stream
}

// Ready returns the event that completes once the batch's device work has
// (mem.NoEvent for a host batch, or when there is nothing to wait for): a
// consumer makes its own stream wait for it (cuStreamWaitEvent) before
// reading the batch's device tensors, without the host waiting.
func (b *Batch) Ready() mem.Event {
	if b == nil || b.dev == nil {
		return mem.NoEvent
	}
	return b.dev.ready
}

// ReleaseAfter is Release for a consumer that queued work reading the
// batch's device tensors on its own stream s: their memory is reused only
// after that work (Release alone orders the reuse after the batch's own
// stream only). Callers that take a device tensor (the C API exporting it
// as a DLPack tensor) set its DevicePtr to 0 first and give its memory back
// themselves (FreeBuffer of the batch's device allocator, DeviceAllocator).
func (b *Batch) ReleaseAfter(s mem.Stream) {
	if b != nil && b.dev != nil {
		b.dev.after = s
	}
	b.Release()
}

// DeviceAllocator returns the allocator a batch's device tensors came from
// (nil for a host batch).
func (b *Batch) DeviceAllocator() mem.BufferAllocator {
	if b == nil || b.dev == nil {
		return nil
	}
	return b.dev.alloc
}

// free gives back t's device memory (t from a device batch); a no-op for
// host tensors, taken tensors (DevicePtr 0) and host batches.
func (d *deviceOut) free(t *mem.Tensor) {
	if d == nil || t.Device.Kind != mem.KindDevice || t.DevicePtr == 0 {
		return
	}
	s := d.stream
	if d.after != mem.NoStream {
		s = d.after
	}
	d.alloc.FreeBuffer(t.Buffer(), s)
	t.DevicePtr = 0
}

// finish calls the batch's done function once.
func (d *deviceOut) finish() {
	if d == nil || d.done == nil {
		return
	}
	done := d.done
	d.done = nil
	done()
}

// batchInputs returns the positions (into the seeds given to New) and the
// original ids of the seeds of batch index.
func (pl *Pipeline) batchInputs(order []int64, index int64) (pos, seeds []int64) {
	pos = pl.batchSeeds(order, int(index))
	seeds = make([]int64, len(pos))
	for t, q := range pos {
		seeds[t] = pl.seedsOrig[q]
	}
	return pos, seeds
}

// sampleMaterialized is the part of worker w's loop for a fork that makes
// its batches itself (a Materializer): the wave of k batches from the
// epoch's i-th on, sampled with keys, queued on send. It returns false when
// the worker must stop.
func (pl *Pipeline) sampleMaterialized(r *run, m Materializer, s worker, i int, batches [][]int64, keys []uint64, order []int64, send func(job) bool) bool {
	req := MaterializeRequest{Batches: batches, Keys: keys, Alloc: pl.alloc, Store: pl.store,
		FeatureNames: pl.opt.FeatureNames, LabelNames: pl.opt.LabelNames}
	for j := range batches {
		pos, seeds := pl.batchInputs(order, pl.index(i+j))
		req.Seeds, req.InputIndex = append(req.Seeds, seeds), append(req.InputIndex, pos)
	}
	fail := func(err error) bool {
		index := pl.index(i)
		send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, sampling batch %d: %w", pl.where(), r.epoch, index, err)})
		return false
	}
	switch {
	case pl.opt.Types != nil:
		return fail(errors.New("the sampler makes its own batches, which have no typed view (Options.Types)"))
	case pl.opt.COO || len(pl.opt.EdgeFeatureNames) > 0:
		return fail(errors.New("the sampler makes its own batches, which have no edge list (Options.COO) nor edge data (Options.EdgeFeatureNames)"))
	case pl.opt.Share != nil && pl.opt.Share.Rows != nil:
		return fail(errors.New("the sampler makes its own batches, which a RowLoader cannot load"))
	}
	out, err := m.SampleMaterialized(pl.life, req) // cancelled by Close, as the CPU sampler is
	if err == nil && len(out) != len(batches) {
		for _, o := range out {
			o.Batch.Release()
		}
		err = fmt.Errorf("the sampler made %d batches of a wave of %d", len(out), len(batches))
	}
	if err != nil {
		return fail(err)
	}
	for j, o := range out {
		b := o.Batch
		b.Index, b.Epoch = pl.index(i+j), r.epoch
		jb := job{index: b.Index, b: b, res: o.Result, s: s, rows: o.Rows}
		if !send(jb) {
			jb.drop()
			for _, rest := range out[j+1:] {
				job{b: rest.Batch, res: rest.Result, s: s}.drop()
			}
			return false
		}
	}
	return true
}
