// Package mem defines how the engine obtains memory for buffers that may
// outlive a call, and how it names where memory lives.
//
// # Host allocators
//
// Every buffer that can leave the engine (sampled indices, gathered
// features, labels) is allocated through an Allocator, so that the C API can
// hand out memory that is not on the Go heap. An Allocator hands out host
// byte slices: Heap (the Go heap, for the engine's own use and Go tests),
// Checked (counts what is outstanding, for tests) and the C layer's.
//
// # Memory kinds, devices and streams
//
// A device backend also needs memory the host cannot address. Device names
// where memory lives: its Kind (KindHost: pageable host memory; KindPinned:
// page-locked host memory that devices read directly; KindDevice: an
// accelerator's memory) and, for device memory, the device's ordinal. The
// zero Device is the host, so code that never mentions devices keeps
// meaning host memory.
//
// A Buffer is a run of bytes of one kind. Host and pinned buffers carry a Go
// slice over their memory (Bytes), so host code reads them as it always did,
// at no cost; a device buffer carries only its address (DevicePtr), which
// Go code passes on (to a kernel launch, a copy, a collective) and never
// dereferences. HostBytes is the checked way for host code to read a buffer
// it was handed: it refuses device memory with an error rather than
// crashing.
//
// Work on device memory is ordered on streams. Stream is an opaque handle
// (a CUDA stream); NoStream means synchronous work and is what host memory
// uses. An Event (a CUDA event) marks a point in a stream's work: a
// consumer's stream can wait for it without the host waiting.
//
// A BufferAllocator hands out buffers of one Device, ordered on a stream:
// AllocBuffer(n, s) and FreeBuffer(b, s), and Device() to say what it hands
// out. It is the Go side of an allocator that a host passes through a C API
// as {malloc_fn, free_fn, ctx, kind} (WholeGraph's shape), and of a device
// memory pool. Kinded adapts any host Allocator (for host or pinned memory).
//
// # Tensors
//
// A Tensor is a typed, shaped, C-contiguous buffer that carries its Device.
// Host and pinned tensors keep their bytes in Data (so today's callers are
// unchanged); a device tensor has Data nil and its address in DevicePtr.
// Tensor.Buffer and TensorIn convert between the two views without copies.
//
// # Off the Go heap
//
// Go-heap memory is never handed to C or to a device driver to keep. Code
// that obtains memory elsewhere marks it (MarkOffHeap: a file's memory map,
// a caller's array from the C API), and OffHeap answers for a slice: a
// device backend registers only such memory in place and copies the rest.
//
// It imports nothing of the engine: it is its lowest layer (engine/layering_test.go).
package mem
