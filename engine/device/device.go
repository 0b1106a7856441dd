// Package device is the engine's one seam to a device backend (the CUDA
// backend, package cuda, which sits outside the engine and registers itself
// here): what core asks of a backend when a loader's options name a device
// (a sampler stage and a gatherer on the device, Backend), and the engine's
// policy for the device tensors such a loader hands out (Session: who holds
// their memory, on which stream it is reused, when the device is torn
// down). A front end (the C API) only marshals: it passes Options through
// core and gives taken tensors back through Session.
//
// The vocabulary is engine/mem's: memory is a mem.BufferAllocator's
// mem.Buffer, work is ordered on a mem.Stream, a point in it is a
// mem.Event.
//
// Device sampling is opt-in: nothing here chooses a device by itself; a
// loader runs on one only when its options name it.
//
// It imports the pipeline and what the pipeline's stages are made of
// (pipeline, cache, sample, partition, feature, mem, errs), never core
// (engine/layering_test.go).
package device

import (
	"fmt"
	"sync"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Placement is where a device loader's topology lives.
type Placement int

const (
	// PlaceAuto: device memory when it fits in the free memory less
	// Options.Reserve, else pinned host memory.
	PlaceAuto Placement = iota
	// PlaceDevice: device memory.
	PlaceDevice
	// PlacePinned: page-locked host memory the kernels read in place.
	PlacePinned
)

// String returns "auto", "device" or "pinned".
func (p Placement) String() string {
	switch p {
	case PlaceAuto:
		return "auto"
	case PlaceDevice:
		return "device"
	case PlacePinned:
		return "pinned"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Options is what a loader's options say of the device it samples on.
type Options struct {
	// Ordinal is the device's number.
	Ordinal int
	// Stream is the consumer's stream (mem.NoStream: none): each batch is
	// made ready for it (its Ready event waited on by it) before it is
	// delivered, and device memory goes back after its work.
	Stream mem.Stream
	// Hot is the hot tier of node data in device memory (HotOn false:
	// none, every row read in place from pinned host memory).
	Hot   cache.Size
	HotOn bool
	// Topology is where the topology lives; Reserve the bytes of device
	// memory the automatic choices leave free.
	Topology Placement
	Reserve  int64
}

// Sampler is a device backend's sampler stage: a pipeline.BatchSampler
// whose forks are Samplers (and pipeline.Materializers when they make
// their batches on the device themselves).
type Sampler interface {
	pipeline.BatchSampler[Sampler]
}

// Request is what a backend builds a device loader's stages from: the
// graph's partition and node data store (internal row order), the sampling
// request and the node data names the loader gathers.
type Request struct {
	Options Options
	Part    *partition.Partitioned
	Store   *feature.Store
	Sample  sample.Request
	Names   []string
}

// Stages are a device loader's stages, made by a backend.
type Stages struct {
	// Sampler is the sampler stage; Store the node data the pipeline
	// gathers from (a gatherer on the device; nil: Request.Store).
	Sampler Sampler
	Store   feature.Gatherer
	// Device orders a consumer's stream after a batch.
	Device Device
	// Close releases the stages and the device (called once, when no
	// batch memory of the loader is in use any more).
	Close func() error
}

// Device is what the engine drives of a device itself: stream order.
type Device interface {
	// WaitOn makes stream s wait for event e (mem.NoEvent: nothing to wait
	// for) without the host waiting.
	WaitOn(s mem.Stream, e mem.Event) error
	// Quiesce waits on the host until every stream of the device's context
	// has finished the work queued so far (the consumer's included): the
	// conservative order for memory whose last reader's stream cannot be
	// named from this thread (a consumer's per-thread stream, PerThread).
	Quiesce() error
}

// Backend builds device loaders' stages.
type Backend interface {
	Open(r Request) (Stages, error)
}

var registry struct {
	sync.Mutex
	b Backend
}

// Register makes b the backend of device loaders (the CUDA backend
// registers itself when it is linked into the library).
func Register(b Backend) {
	registry.Lock()
	defer registry.Unlock()
	registry.b = b
}

// ErrNoBackend is the error of a device loader in a build without a device
// backend; it wraps errs.ErrNotSupported.
var ErrNoBackend = errs.Errorf(errs.ErrNotSupported, "device: no device backend in this build")

// Open builds the stages of a device loader with the registered backend.
func Open(r Request) (Stages, error) {
	registry.Lock()
	b := registry.b
	registry.Unlock()
	if b == nil {
		return Stages{}, ErrNoBackend
	}
	switch q := r.Sample; {
	case q.Scheme != sample.NodeWise || q.Disjoint || q.Temporal != sample.TemporalNone || q.RelationFanouts != nil:
		return Stages{}, errs.Errorf(errs.ErrNotSupported, "device %d: the device samples node-wise only (not layer-wise, disjoint, temporal or typed); sample on the host", r.Options.Ordinal)
	case r.Options.Ordinal < 0:
		return Stages{}, fmt.Errorf("device: ordinal %d (want >= 0)", r.Options.Ordinal)
	case r.Options.Reserve < 0:
		return Stages{}, fmt.Errorf("device: reserve %d bytes (want >= 0)", r.Options.Reserve)
	case r.Options.Topology < PlaceAuto || r.Options.Topology > PlacePinned:
		return Stages{}, fmt.Errorf("device: topology placement %d (want auto, device or pinned)", r.Options.Topology)
	}
	return b.Open(r)
}

// Available reports whether a device backend is registered (this build can
// open device loaders).
func Available() bool {
	registry.Lock()
	defer registry.Unlock()
	return registry.b != nil
}
