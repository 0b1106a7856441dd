//go:build cuda

package cuda

/*
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// 1 when the process's libcuda.so.1 is graphferry's fake driver
// (cuda/fakedriver, tests on machines without a GPU), which exports this
// marker; the real driver does not.
static int gf_driver_is_fake(void) { return dlsym(RTLD_DEFAULT, "gf_fakecuda_is_fake") != 0; }

// The driver's name and description of a CUresult ("CUDA_ERROR_..."), or
// NULL for a code it does not know.
static const char *gf_cu_error_name(int code) {
	const char *s = 0;
	if (cuGetErrorName((CUresult)code, &s) != CUDA_SUCCESS) return 0;
	return s;
}
// Streams and events by the handles other libraries hold (uintptr_t).
static CUresult gf_stream_wait_event(CUstream s, uintptr_t e) { return cuStreamWaitEvent(s, (CUevent)e, 0); }
static CUresult gf_handle_wait_event(uintptr_t s, uintptr_t e) { return cuStreamWaitEvent((CUstream)s, (CUevent)e, 0); }
static CUresult gf_event_record(CUevent e, uintptr_t s) { return cuEventRecord(e, (CUstream)s); }
static const char *gf_cu_error_string(int code) {
	const char *s = 0;
	if (cuGetErrorString((CUresult)code, &s) != CUDA_SUCCESS) return 0;
	return s;
}

// The most parameters a kernel launch takes (the kernels have at most 16).
#define GF_MAX_PARAMS 64

// gf_launch launches f on a 1-D grid of grid blocks of block threads on
// stream s with the n 8-byte parameters args. The parameters and the array
// of pointers to them are built here, on the C stack, by C: the driver
// copies the values at the launch, and no Go code ever stores into C memory
// (a Go pointer store into C memory runs the garbage collector's write
// barrier on the word it overwrites; see launch in gpu.go).
static CUresult gf_launch(CUfunction f, unsigned grid, unsigned block, CUstream s, const uint64_t *args, int n) {
	uint64_t vals[GF_MAX_PARAMS];
	void *params[GF_MAX_PARAMS];
	if (n < 0 || n > GF_MAX_PARAMS) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) {
		vals[i] = args[i];
		params[i] = &vals[i];
	}
	return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, n ? params : NULL, NULL);
}
*/
import "C"

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
	"gorgonia.org/cu"
)

// kernelsPTX is cuda/kernels compiled to PTX for compute_70 by make lib-cuda
// (cuda/tools/ptx.py, NVRTC); the driver JIT-compiles it for the GPU at hand.
//
//go:embed kernels.ptx
var kernelsPTX string

// GPU is the Device of one CUDA GPU: its primary context (the one PyTorch
// uses, so device pointers are shared with it), the kernels module (loaded
// once per context, shared by every GPU of that context, unloaded with the
// last), and non-blocking streams: a default one, on which the GPU's own
// CopyIn, CopyOut, Memset, Launch and Sync work (its host copies wait), and
// those NewStream makes, each used by one goroutine while the others run
// theirs (a pipeline worker's). Page-locked host memory is allocated
// mapped (AllocHost) or registered in place (RegisterHost, reference
// counted per range), read by the kernels over the bus.
//
// Every method leaves the calling thread's current CUDA context as it found
// it (the context is pushed on entry and popped on return), so PyTorch's
// current device and context never change under it. Every launch is
// checked; errors of asynchronous work surface at the next wait and name the
// kernels launched on that stream since its last successful wait. A sticky
// error (a fault inside a kernel) makes the context unusable for the whole
// process: the GPU then refuses every call with that error.
type GPU struct {
	ordinal  int
	dev      cu.Device
	ctx      cu.CUContext
	mod      *module
	info     Info
	blocking bool // wait after every launch (GRAPHFERRY_CUDA_LAUNCH_BLOCKING=1)
	def      *gpuStream

	closed atomic.Bool
	sticky atomic.Pointer[error] // set once a sticky error was seen

	mu      sync.Mutex // serialises the device-level calls; guards what follows
	streams map[*gpuStream]bool
	events  map[*gpuEvent]bool
	regs    map[hostRange]int // registered host ranges, by reference count
}

// hostRange is a registered range of host memory.
type hostRange struct {
	p uintptr
	n int
}

// Info describes the device and the driver a GPU was opened on.
type Info struct {
	Ordinal          int    `json:"ordinal"`
	Name             string `json:"name"`
	ComputeMajor     int    `json:"compute_major"`
	ComputeMinor     int    `json:"compute_minor"`
	DriverVersion    int    `json:"driver_version"`     // cuDriverGetVersion: 1000*major + 10*minor
	PTXISA           string `json:"ptx_isa"`            // the embedded kernels' .version
	PTXTarget        string `json:"ptx_target"`         // the embedded kernels' .target
	NeedDriver       int    `json:"needs_driver"`       // the lowest driver version that loads the PTX
	TotalMemoryBytes int64  `json:"total_memory_bytes"` // device memory
	FakeDriver       bool   `json:"fake_driver"`        // graphferry's test double of the driver answered
}

// module is the kernels' module of one context, shared by its GPUs. The
// module and its functions are the driver's handles, loaded and looked up
// here rather than through gorgonia.org/cu, whose Function.Launch is not
// safe with Go's garbage collector (see gpuStream.Launch).
type module struct {
	mod   C.CUmodule
	refs  int      // guarded by modules' lock
	funcs sync.Map // kernel name -> C.CUfunction: a launch takes no process-wide lock
}

// modules holds the loaded kernel modules by context.
var modules = struct {
	sync.Mutex
	m map[cu.CUContext]*module
}{m: map[cu.CUContext]*module{}}

// OpenGPU checks the device of the given ordinal (it exists, its compute
// capability is at least MinComputeMajor.0, the driver is new enough for
// the kernels' PTX), retains its primary context, loads the kernels (once
// per context) and creates the stream. The calling thread's current context
// is unchanged on return, on success and on failure alike.
func OpenGPU(ordinal int) (*GPU, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	info, err := Probe(ordinal)
	if err != nil {
		return nil, err
	}
	dev, _ := cu.GetDevice(ordinal) // Probe checked it
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, fmt.Errorf("cuda: retaining the primary context of device %d: %s", ordinal, describe(err))
	}
	g := &GPU{dev: dev, ctx: ctx, ordinal: ordinal, info: info, blocking: os.Getenv("GRAPHFERRY_CUDA_LAUNCH_BLOCKING") == "1",
		streams: map[*gpuStream]bool{}, events: map[*gpuEvent]bool{}, regs: map[hostRange]int{}}
	if err := cu.PushCurrentCtx(ctx); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: making the primary context of device %d current: %s", ordinal, describe(err))
	}
	fail := func(err error) (*GPU, error) {
		if g.mod != nil {
			releaseModule(ctx, g.mod)
		}
		_, _ = cu.PopCurrentCtx()
		_ = dev.ReleasePrimaryCtx()
		return nil, err
	}
	if g.mod, err = acquireModule(ctx, info); err != nil {
		return fail(err)
	}
	stream, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return fail(fmt.Errorf("cuda: creating a stream on device %d: %s", ordinal, describe(err)))
	}
	g.def = &gpuStream{g: g, s: stream}
	if _, err := cu.PopCurrentCtx(); err != nil {
		_ = stream.Destroy()
		releaseModule(ctx, g.mod)
		_ = dev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: restoring the caller's context: %s", describe(err))
	}
	return g, nil
}

// MinComputeMajor is the oldest GPU architecture the kernels are built for
// (sm_70, Volta).
const MinComputeMajor = 7

// Probe checks, without retaining a context, that the device of the given
// ordinal can run the kernels, and describes it; its errors say why not
// (no such device, an architecture older than sm_70, a driver older than
// the PTX needs).
func Probe(ordinal int) (Info, error) {
	info := Info{Ordinal: ordinal}
	info.PTXISA, info.PTXTarget = ptxHeader(kernelsPTX)
	need, err := driverForISA(info.PTXISA)
	if err != nil {
		return info, err
	}
	info.NeedDriver = need
	info.DriverVersion = cu.Version()
	info.FakeDriver = C.gf_driver_is_fake() != 0
	n, err := cu.NumDevices()
	if err != nil {
		return info, fmt.Errorf("cuda: counting devices: %s", describe(err))
	}
	if ordinal < 0 || ordinal >= n {
		return info, fmt.Errorf("cuda: device %d does not exist: the driver sees %d device(s) (CUDA_VISIBLE_DEVICES=%q)",
			ordinal, n, os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return info, fmt.Errorf("cuda: device %d: %s", ordinal, describe(err))
	}
	if info.Name, err = dev.Name(); err != nil {
		info.Name = fmt.Sprintf("GPU %d", ordinal)
	}
	if info.ComputeMajor, err = dev.Attribute(cu.ComputeCapabilityMajor); err != nil {
		return info, fmt.Errorf("cuda: device %d: compute capability: %s", ordinal, describe(err))
	}
	if info.ComputeMinor, err = dev.Attribute(cu.ComputeCapabilityMinor); err != nil {
		return info, fmt.Errorf("cuda: device %d: compute capability: %s", ordinal, describe(err))
	}
	if mem, err := dev.TotalMem(); err == nil {
		info.TotalMemoryBytes = mem
	}
	if info.ComputeMajor < MinComputeMajor {
		return info, fmt.Errorf("cuda: device %d (%s) has compute capability %d.%d; graphferry's kernels need %d.0 or newer (Volta, sm_70)",
			ordinal, info.Name, info.ComputeMajor, info.ComputeMinor, MinComputeMajor)
	}
	if info.DriverVersion < need {
		return info, fmt.Errorf("cuda: the NVIDIA driver is too old: it supports CUDA %s, and graphferry's kernels (PTX ISA %s) need CUDA %s or newer (driver %s or newer); update the driver",
			cudaVersion(info.DriverVersion), info.PTXISA, cudaVersion(need), driverRelease(need))
	}
	return info, nil
}

// acquireModule returns ctx's kernels module (ctx current), loading it the
// first time.
func acquireModule(ctx cu.CUContext, info Info) (*module, error) {
	modules.Lock()
	defer modules.Unlock()
	if m := modules.m[ctx]; m != nil {
		m.refs++
		return m, nil
	}
	image := C.CString(kernelsPTX)
	defer C.free(unsafe.Pointer(image))
	var mod C.CUmodule
	if err := check(C.cuModuleLoadData(&mod, unsafe.Pointer(image))); err != nil {
		return nil, fmt.Errorf("cuda: the driver rejected graphferry's kernels (PTX ISA %s, %s) on device %d (%s, compute %d.%d, driver CUDA %s): %s",
			info.PTXISA, info.PTXTarget, info.Ordinal, info.Name, info.ComputeMajor, info.ComputeMinor, cudaVersion(info.DriverVersion), describe(err))
	}
	m := &module{mod: mod, refs: 1}
	modules.m[ctx] = m
	return m, nil
}

// releaseModule drops one reference to ctx's module (ctx current),
// unloading it with the last (unload false: the context is not current,
// the module goes with the context).
func releaseModule(ctx cu.CUContext, m *module, unload ...bool) error {
	modules.Lock()
	defer modules.Unlock()
	m.refs--
	if m.refs > 0 {
		return nil
	}
	delete(modules.m, ctx)
	if len(unload) > 0 && !unload[0] {
		return nil
	}
	if err := check(C.cuModuleUnload(m.mod)); err != nil {
		return fmt.Errorf("cuda: unloading the kernels: %s", describe(err))
	}
	return nil
}

// function returns the kernel's handle, looked up once (concurrent
// lookups of a new name may both ask the driver: the same handle).
func (m *module) function(name string) (C.CUfunction, error) {
	if fn, ok := m.funcs.Load(name); ok {
		return fn.(C.CUfunction), nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var fn C.CUfunction
	if err := check(C.cuModuleGetFunction(&fn, m.mod, cname)); err != nil {
		return fn, fmt.Errorf("cuda: kernel %s: %s", name, describe(err))
	}
	m.funcs.Store(name, fn)
	return fn, nil
}

// errClosed is the error of a call on a closed GPU.
var errClosed = errors.New("cuda: the GPU device is closed")

// usable returns the reason g cannot be used (closed, or poisoned by a
// sticky error), or nil.
func (g *GPU) usable() error {
	if g.closed.Load() {
		return errClosed
	}
	if e := g.sticky.Load(); e != nil {
		return *e
	}
	return nil
}

// push makes the GPU's context current on this OS thread (pushed over
// whatever was current, the thread locked); the returned function pops it,
// restoring the caller's context.
func (g *GPU) push() (func(), error) {
	runtime.LockOSThread()
	if err := cu.PushCurrentCtx(g.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("cuda: making the context of device %d current: %s", g.ordinal, describe(err))
	}
	return func() {
		_, _ = cu.PopCurrentCtx()
		runtime.UnlockOSThread()
	}, nil
}

// enter serialises a device-level call (allocations, registrations, new
// streams and events) and makes the context current; the caller defers the
// returned function.
func (g *GPU) enter() (func(), error) {
	g.mu.Lock()
	if err := g.usable(); err != nil {
		g.mu.Unlock()
		return nil, err
	}
	pop, err := g.push()
	if err != nil {
		g.mu.Unlock()
		return nil, err
	}
	return func() {
		pop()
		g.mu.Unlock()
	}, nil
}

// Name returns the GPU's name.
func (g *GPU) Name() string { return g.info.Name }

// Info describes the GPU and its driver.
func (g *GPU) Info() Info { return g.info }

// Ordinal is the device's ordinal.
func (g *GPU) Ordinal() int { return g.ordinal }

// MemInfo returns the device's free and total memory.
func (g *GPU) MemInfo() (free, total int64, err error) {
	leave, err := g.enter()
	if err != nil {
		return 0, 0, err
	}
	defer leave()
	free, total, err = cu.MemInfo()
	if err != nil {
		return 0, 0, g.fail("reading the free memory", err)
	}
	return free, total, nil
}

func (g *GPU) Alloc(bytes int64) (Ptr, error) {
	leave, err := g.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	p, err := cu.MemAlloc(max(bytes, 1))
	if err != nil {
		return 0, fmt.Errorf("cuda: allocating %d bytes on device %d: %s", bytes, g.ordinal, describe(err))
	}
	return Ptr(p), nil
}

func (g *GPU) Free(p Ptr) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemFree(cu.DevicePtr(p)); err != nil {
		return g.fail("freeing device memory", err)
	}
	return nil
}

// driverError is a CUresult of a call graphferry makes itself (not through
// gorgonia.org/cu).
type driverError int

func (e driverError) Error() string { return codeName(int(e)) }

func check(r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return driverError(r)
}

// AllocHost allocates page-locked host memory mapped for the device
// (cuMemHostAlloc, DEVICEMAP | PORTABLE).
func (g *GPU) AllocHost(bytes int64) (HostMem, error) {
	leave, err := g.enter()
	if err != nil {
		return HostMem{}, err
	}
	defer leave()
	var p unsafe.Pointer
	if err := check(C.cuMemHostAlloc(&p, C.size_t(max(bytes, 1)), C.CU_MEMHOSTALLOC_DEVICEMAP|C.CU_MEMHOSTALLOC_PORTABLE)); err != nil {
		return HostMem{}, fmt.Errorf("cuda: allocating %d bytes of pinned host memory: %s", bytes, describe(err))
	}
	var d C.CUdeviceptr
	if err := check(C.cuMemHostGetDevicePointer(&d, p, 0)); err != nil {
		_ = C.cuMemFreeHost(p)
		return HostMem{}, fmt.Errorf("cuda: mapping pinned host memory for device %d: %s", g.ordinal, describe(err))
	}
	return HostMem{Bytes: unsafe.Slice((*byte)(p), bytes), Ptr: Ptr(d)}, nil
}

// FreeHost frees memory from AllocHost.
func (g *GPU) FreeHost(h HostMem) error {
	if len(h.Bytes) == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := check(C.cuMemFreeHost(unsafe.Pointer(&h.Bytes[0]))); err != nil {
		return g.fail("freeing pinned host memory", err)
	}
	return nil
}

// RegisterHost page-locks b in place and maps it for the device
// (cuMemHostRegister, DEVICEMAP | PORTABLE, READ_ONLY where the system
// offers it: memory-mapped files are read-only mappings). b must be off
// the Go heap (mem.OffHeap): the driver keeps Go-heap memory nowhere.
func (g *GPU) RegisterHost(b []byte) (Ptr, error) {
	if len(b) == 0 {
		return 0, errors.New("cuda: registering an empty range")
	}
	if !mem.OffHeap(b) {
		return 0, fmt.Errorf("cuda: refusing to register %d bytes in place: not known to be off the Go heap (mem.MarkOffHeap); copy it into pinned memory (AllocHost)", len(b))
	}
	leave, err := g.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	p := unsafe.Pointer(&b[0])
	r := hostRange{uintptr(p), len(b)}
	if g.regs[r] == 0 {
		flags := C.uint(C.CU_MEMHOSTREGISTER_DEVICEMAP | C.CU_MEMHOSTREGISTER_PORTABLE)
		err := check(C.cuMemHostRegister(p, C.size_t(len(b)), flags|C.CU_MEMHOSTREGISTER_READ_ONLY))
		if err != nil {
			err = check(C.cuMemHostRegister(p, C.size_t(len(b)), flags))
		}
		if err != nil {
			return 0, fmt.Errorf("cuda: registering %d bytes of host memory with device %d: %s", len(b), g.ordinal, describe(err))
		}
	}
	var d C.CUdeviceptr
	if err := check(C.cuMemHostGetDevicePointer(&d, p, 0)); err != nil {
		if g.regs[r] == 0 {
			_ = C.cuMemHostUnregister(p)
		}
		return 0, fmt.Errorf("cuda: mapping registered host memory for device %d: %s", g.ordinal, describe(err))
	}
	g.regs[r]++
	return Ptr(d), nil
}

// UnregisterHost drops one registration of b, unregistering it with the
// last.
func (g *GPU) UnregisterHost(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	p := unsafe.Pointer(&b[0])
	r := hostRange{uintptr(p), len(b)}
	switch g.regs[r] {
	case 0:
		return errors.New("cuda: unregistering host memory that is not registered")
	case 1:
		delete(g.regs, r)
		if err := check(C.cuMemHostUnregister(p)); err != nil {
			return g.fail("unregistering host memory", err)
		}
	default:
		g.regs[r]--
	}
	return nil
}

// NewStream creates a non-blocking stream of the GPU.
func (g *GPU) NewStream() (Stream, error) {
	leave, err := g.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	s, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("cuda: creating a stream on device %d: %s", g.ordinal, describe(err))
	}
	st := &gpuStream{g: g, s: s}
	g.streams[st] = true
	return st, nil
}

// NewEvent creates an event of the GPU (without timing: cheaper).
func (g *GPU) NewEvent() (Event, error) {
	leave, err := g.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	var e C.CUevent
	if err := check(C.cuEventCreate(&e, C.CU_EVENT_DISABLE_TIMING)); err != nil {
		return nil, fmt.Errorf("cuda: creating an event on device %d: %s", g.ordinal, describe(err))
	}
	ev := &gpuEvent{g: g, e: e}
	g.events[ev] = true
	return ev, nil
}

// The default stream's work: host copies wait (Go memory must not be read
// after a call returns), kernel launches do not.

func (g *GPU) CopyIn(dst Ptr, src []byte) error {
	if err := g.def.CopyIn(dst, src); err != nil {
		return err
	}
	return g.def.Sync()
}

func (g *GPU) CopyOut(dst []byte, src Ptr) error {
	if err := g.def.CopyOut(dst, src); err != nil {
		return err
	}
	return g.def.Sync()
}

func (g *GPU) CopyDev(dst, src Ptr, bytes int64) error { return g.def.CopyDev(dst, src, bytes) }

func (g *GPU) Memset(dst Ptr, b byte, bytes int64) error { return g.def.Memset(dst, b, bytes) }

func (g *GPU) Launch(kernel string, grid, block int, args ...uint64) error {
	return g.def.Launch(kernel, grid, block, args...)
}

// Sync waits for the work issued so far on the default stream and reports
// its errors.
func (g *GPU) Sync() error { return g.def.Sync() }

// gpuStream is a stream of a GPU.
type gpuStream struct {
	g        *GPU
	mu       sync.Mutex // one call at a time
	s        cu.Stream
	inflight []string // kernels launched since the last successful wait
	closed   bool
}

// enter starts a call on the stream: its lock, the GPU usable, the context
// current.
func (st *gpuStream) enter() (func(), error) {
	st.mu.Lock()
	err := st.g.usable()
	if err == nil && st.closed {
		err = errors.New("cuda: the stream is closed")
	}
	if err != nil {
		st.mu.Unlock()
		return nil, err
	}
	pop, err := st.g.push()
	if err != nil {
		st.mu.Unlock()
		return nil, err
	}
	return func() {
		pop()
		st.mu.Unlock()
	}, nil
}

func (st *gpuStream) c() C.CUstream { return C.CUstream(unsafe.Pointer(st.s.C())) }

// Handle is the CUstream.
func (st *gpuStream) Handle() mem.Stream { return mem.Stream(uintptr(unsafe.Pointer(st.s.C()))) }

func (st *gpuStream) CopyIn(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src)), st.s); err != nil {
		return st.fail("copying to the device", err)
	}
	return nil
}

func (st *gpuStream) CopyOut(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst)), st.s); err != nil {
		return st.fail("copying from the device", err)
	}
	return nil
}

func (st *gpuStream) CopyDev(dst, src Ptr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, st.s); err != nil {
		return st.fail("copying on the device", err)
	}
	return nil
}

func (st *gpuStream) Memset(dst Ptr, b byte, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemsetD8Async(cu.DevicePtr(dst), b, bytes, st.s); err != nil {
		return st.fail("setting device memory", err)
	}
	return nil
}

func (st *gpuStream) Launch(kernel string, grid, block int, args ...uint64) error {
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	fn, err := st.g.mod.function(kernel)
	if err != nil {
		return err
	}
	if err := launchKernel(fn, grid, block, st.c(), args); err != nil {
		return st.fail(fmt.Sprintf("launching kernel %s (%d blocks of %d threads)", kernel, grid, block), err)
	}
	st.inflight = append(st.inflight, kernel)
	if st.g.blocking {
		return st.wait("running kernel " + kernel)
	}
	return nil
}

// launchKernel launches fn with the 8-byte parameters args, which C copies
// into its own memory (gf_launch): the driver reads them during the call
// only, and args holds no Go pointer, so passing it is cgo's rule kept.
//
// Not gorgonia.org/cu's Function.Launch: it stores the parameters' C
// addresses into fresh C.malloc memory with a Go pointer store
// (*(*unsafe.Pointer)(p) = q). While the collector marks, that store's
// write barrier hands the word it overwrites, whatever malloc's block held
// before, to the collector as a Go pointer. Blocks freed by earlier
// launches hold their kernel parameters, among them addresses of Go arrays
// then registered for the kernels (a store's cold tier; only memory off
// the Go heap is registered now), so the collector found "a bad pointer
// in Go heap" or marked an object freed meanwhile and died with "found
// pointer to free object" (TestGPULaunchUnderCollection).
func launchKernel(fn C.CUfunction, grid, block int, s C.CUstream, args []uint64) error {
	if len(args) > C.GF_MAX_PARAMS {
		return fmt.Errorf("cuda: %d kernel parameters (at most %d)", len(args), C.GF_MAX_PARAMS)
	}
	var p *C.uint64_t
	if len(args) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return check(C.gf_launch(fn, C.uint(grid), C.uint(block), s, p, C.int(len(args))))
}

// Wait makes the stream's later work wait for the event of handle e.
func (st *gpuStream) Wait(e mem.Event) error {
	if e == mem.NoEvent {
		return nil
	}
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := check(C.gf_stream_wait_event(st.c(), C.uintptr_t(e))); err != nil {
		return st.fail("waiting for an event", err)
	}
	return nil
}

// WaitOn makes stream s, a consumer's (a CUstream of the GPU's primary
// context, such as PyTorch's), wait for the event of handle e without the
// host waiting: the stream contract of device outputs (mem.NoEvent:
// nothing to wait for).
func (g *GPU) WaitOn(s mem.Stream, e mem.Event) error {
	if e == mem.NoEvent {
		return nil
	}
	if s == mem.NoStream {
		return errors.New("cuda: waiting for an event: the consumer's stream is NULL")
	}
	if err := g.usable(); err != nil {
		return err
	}
	pop, err := g.push()
	if err != nil {
		return err
	}
	defer pop()
	if err := check(C.gf_handle_wait_event(C.uintptr_t(s), C.uintptr_t(e))); err != nil {
		return g.fail("making the consumer's stream wait for a batch", err)
	}
	return nil
}

// Sync waits for the work issued so far on the stream and reports its
// errors.
func (st *gpuStream) Sync() error {
	leave, err := st.enter()
	if err != nil {
		return err
	}
	defer leave()
	return st.wait("waiting for the device")
}

// wait synchronises the stream (entered); an error names the kernels
// launched since the last successful wait.
func (st *gpuStream) wait(what string) error {
	if err := st.s.Synchronize(); err != nil {
		if len(st.inflight) > 0 {
			what += " after kernels " + strings.Join(dedupe(st.inflight), ", ")
		}
		return st.fail(what, err)
	}
	st.inflight = st.inflight[:0]
	return nil
}

func (st *gpuStream) fail(what string, err error) error {
	st.inflight = st.inflight[:0]
	return st.g.fail(what, err)
}

// Close waits for the stream and destroys it (a no-op once closed).
func (st *gpuStream) Close() error {
	leave, err := st.enter()
	if err != nil {
		if errors.Is(err, errClosed) || st.closed {
			return nil
		}
		return err
	}
	defer leave()
	return st.destroy()
}

// destroy waits for and destroys the stream (entered, or at the GPU's
// Close).
func (st *gpuStream) destroy() error {
	if st.closed {
		return nil
	}
	st.closed = true
	var errs []error
	if st.g.sticky.Load() == nil {
		if err := st.s.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("cuda: device %d: waiting for a stream: %s", st.g.ordinal, describe(err)))
		}
	}
	if err := st.s.Destroy(); err != nil {
		errs = append(errs, fmt.Errorf("cuda: destroying a stream: %s", describe(err)))
	}
	st.g.mu.Lock()
	delete(st.g.streams, st)
	st.g.mu.Unlock()
	return errors.Join(errs...)
}

// gpuEvent is an event of a GPU.
type gpuEvent struct {
	g      *GPU
	e      C.CUevent
	closed bool // guarded by g.mu
}

// Handle is the CUevent.
func (ev *gpuEvent) Handle() mem.Event { return mem.Event(uintptr(unsafe.Pointer(ev.e))) }

// eventCall runs fn with the context current, the GPU usable.
func (ev *gpuEvent) call(what string, fn func() C.CUresult) error {
	if err := ev.g.usable(); err != nil {
		return err
	}
	pop, err := ev.g.push()
	if err != nil {
		return err
	}
	defer pop()
	if err := check(fn()); err != nil {
		return ev.g.fail(what, err)
	}
	return nil
}

// RecordOn records the event on the stream of handle s.
func (ev *gpuEvent) RecordOn(s mem.Stream) error {
	return ev.call("recording an event", func() C.CUresult {
		return C.gf_event_record(ev.e, C.uintptr_t(s))
	})
}

// Done reports whether the work before the event's last record completed.
func (ev *gpuEvent) Done() (bool, error) {
	var r C.CUresult
	err := ev.call("querying an event", func() C.CUresult {
		r = C.cuEventQuery(ev.e)
		if r == C.CUDA_ERROR_NOT_READY {
			return C.CUDA_SUCCESS
		}
		return r
	})
	return err == nil && r == C.CUDA_SUCCESS, err
}

// Sync waits on the host for the event.
func (ev *gpuEvent) Sync() error {
	return ev.call("waiting for an event", func() C.CUresult { return C.cuEventSynchronize(ev.e) })
}

// Close destroys the event (a no-op once closed).
func (ev *gpuEvent) Close() error {
	leave, err := ev.g.enter()
	if err != nil {
		if errors.Is(err, errClosed) {
			return nil
		}
		return err
	}
	defer leave()
	if ev.closed {
		return nil
	}
	ev.closed = true
	delete(ev.g.events, ev)
	return check(C.cuEventDestroy(ev.e))
}

// fail wraps a driver error of device g; a sticky one poisons the GPU.
func (g *GPU) fail(what string, err error) error {
	msg := fmt.Sprintf("cuda: device %d: %s: %s", g.ordinal, what, describe(err))
	if code, ok := errCode(err); ok && stickyCodes[code] {
		msg += "; this error is sticky: the CUDA context of this process is unusable and the process must be restarted (GRAPHFERRY_CUDA_LAUNCH_BLOCKING=1 names the failing kernel exactly)"
		e := errors.New(msg)
		g.sticky.CompareAndSwap(nil, &e)
		return *g.sticky.Load()
	}
	return errors.New(msg)
}

func dedupe(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// CopyBandwidth measures host-to-device copy bandwidth (bytes/s) from
// pageable Go memory, bytes per copy, best of reps.
func (g *GPU) CopyBandwidth(bytes int64, reps int) (float64, error) {
	buf := make([]byte, bytes)
	p, err := g.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	defer g.Free(p)
	best := time.Duration(1<<63 - 1)
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		if err := g.CopyIn(p, buf); err != nil {
			return 0, err
		}
		best = min(best, time.Since(t0))
	}
	return float64(bytes) / best.Seconds(), nil
}

// Close destroys the streams and events made here (waiting for the
// streams), drops the module (unloaded with its context's last GPU) and
// releases the primary context. Registered host memory and pinned
// allocations still held are released with the context by the driver
// only when it is destroyed: their owners free them first. A closed GPU
// refuses every call; closing twice is a no-op.
func (g *GPU) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed.Swap(true) {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.PushCurrentCtx(g.ctx); err != nil {
		// Nothing can be destroyed without the context: let go of it all
		// the same (our module reference, the primary context, with whose
		// last release the driver frees the streams and events made here).
		errs := []error{fmt.Errorf("cuda: closing device %d: making its context current: %s; its streams and events are released with the primary context", g.ordinal, describe(err))}
		for ev := range g.events {
			ev.closed = true
		}
		g.streams, g.events = map[*gpuStream]bool{}, map[*gpuEvent]bool{}
		errs = append(errs, releaseModule(g.ctx, g.mod, false))
		if err := g.dev.ReleasePrimaryCtx(); err != nil {
			errs = append(errs, fmt.Errorf("cuda: releasing the primary context: %s", describe(err)))
		}
		return errors.Join(errs...)
	}
	var errs []error
	streams := []*gpuStream{g.def}
	for st := range g.streams {
		streams = append(streams, st)
	}
	g.mu.Unlock() // destroy takes it
	for _, st := range streams {
		st.mu.Lock()
		errs = append(errs, st.destroy())
		st.mu.Unlock()
	}
	g.mu.Lock()
	for ev := range g.events {
		ev.closed = true
		errs = append(errs, check(C.cuEventDestroy(ev.e)))
	}
	g.events = map[*gpuEvent]bool{}
	errs = append(errs, releaseModule(g.ctx, g.mod))
	_, _ = cu.PopCurrentCtx()
	if err := g.dev.ReleasePrimaryCtx(); err != nil {
		errs = append(errs, fmt.Errorf("cuda: releasing the primary context: %s", describe(err)))
	}
	return errors.Join(errs...)
}

// The CUDA library's device loaders (engine/device) run on GPUs.
func init() { device.Register(NewBackend(Open)) }

// Quiesce waits on the host for all the work queued so far in the GPU's
// context, on every stream (cuCtxSynchronize): a consumer's per-thread
// stream of another thread included.
func (g *GPU) Quiesce() error {
	if err := g.usable(); err != nil {
		return err
	}
	pop, err := g.push()
	if err != nil {
		return err
	}
	defer pop()
	if err := check(C.cuCtxSynchronize()); err != nil {
		return g.fail("waiting for the device's work", err)
	}
	return nil
}

// Open returns the GPU device of the given ordinal (OpenGPU).
func Open(ordinal int) (Device, error) {
	g, err := OpenGPU(ordinal)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// ---------------------------------------------------------------------------
// Driver errors

// errCode is the CUresult behind a gorgonia.org/cu error (its result type is
// an unexported int).
func errCode(err error) (int, bool) {
	if err == nil {
		return 0, false
	}
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Int {
		return int(v.Int()), true
	}
	return 0, false
}

// describe names a driver error as the driver does:
// "CUDA_ERROR_INVALID_VALUE (1): invalid argument".
func describe(err error) string {
	code, ok := errCode(err)
	if !ok {
		return err.Error()
	}
	return codeName(code)
}

func codeName(code int) string {
	name, text := C.gf_cu_error_name(C.int(code)), C.gf_cu_error_string(C.int(code))
	if name == nil {
		return fmt.Sprintf("CUDA error %d", code)
	}
	s := fmt.Sprintf("%s (%d)", C.GoString(name), code)
	if text != nil {
		s += ": " + C.GoString(text)
	}
	return s
}

// stickyCodes are the CUresults after which the context cannot be used
// again (faults inside a kernel).
var stickyCodes = map[int]bool{
	700: true, // CUDA_ERROR_ILLEGAL_ADDRESS
	702: true, // CUDA_ERROR_LAUNCH_TIMEOUT (the watchdog killed a kernel)
	714: true, // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: true, // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: true, // CUDA_ERROR_MISALIGNED_ADDRESS
	717: true, // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: true, // CUDA_ERROR_INVALID_PC
	719: true, // CUDA_ERROR_LAUNCH_FAILED
	710: true, // CUDA_ERROR_ASSERT
}
