//go:build cuda

package cuda

/*
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>

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
static const char *gf_cu_error_string(int code) {
	const char *s = 0;
	if (cuGetErrorString((CUresult)code, &s) != CUDA_SUCCESS) return 0;
	return s;
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
	"time"
	"unsafe"

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
// last), one non-blocking stream on which every operation is issued in order.
// Host copies wait for the stream (Go memory must not be read after a call
// returns), kernel launches do not.
//
// Every method leaves the calling thread's current CUDA context as it found
// it (the context is pushed on entry and popped on return), so PyTorch's
// current device and context never change under it. Every launch is
// checked; errors of asynchronous work surface at the next wait and name the
// kernels launched since the last successful one. A sticky error (a fault
// inside a kernel) makes the context unusable for the whole process: the GPU
// then refuses every call with that error.
type GPU struct {
	mu       sync.Mutex
	ordinal  int
	dev      cu.Device
	ctx      cu.CUContext
	mod      *module
	stream   cu.Stream
	info     Info
	closed   bool
	sticky   error    // set once a sticky error was seen
	inflight []string // kernels launched since the last successful wait
	blocking bool     // wait after every launch (GRAPHFERRY_CUDA_LAUNCH_BLOCKING=1)
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

// module is the kernels' module of one context, shared by its GPUs.
type module struct {
	mod   cu.Module
	refs  int
	funcs map[string]cu.Function
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
	g := &GPU{dev: dev, ctx: ctx, ordinal: ordinal, info: info, blocking: os.Getenv("GRAPHFERRY_CUDA_LAUNCH_BLOCKING") == "1"}
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
	if g.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return fail(fmt.Errorf("cuda: creating a stream on device %d: %s", ordinal, describe(err)))
	}
	if _, err := cu.PopCurrentCtx(); err != nil {
		_ = g.stream.Destroy()
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
	mod, err := cu.LoadData(kernelsPTX)
	if err != nil {
		return nil, fmt.Errorf("cuda: the driver rejected graphferry's kernels (PTX ISA %s, %s) on device %d (%s, compute %d.%d, driver CUDA %s): %s",
			info.PTXISA, info.PTXTarget, info.Ordinal, info.Name, info.ComputeMajor, info.ComputeMinor, cudaVersion(info.DriverVersion), describe(err))
	}
	m := &module{mod: mod, refs: 1, funcs: map[string]cu.Function{}}
	modules.m[ctx] = m
	return m, nil
}

// releaseModule drops one reference to ctx's module (ctx current),
// unloading it with the last.
func releaseModule(ctx cu.CUContext, m *module) error {
	modules.Lock()
	defer modules.Unlock()
	m.refs--
	if m.refs > 0 {
		return nil
	}
	delete(modules.m, ctx)
	if err := m.mod.Unload(); err != nil {
		return fmt.Errorf("cuda: unloading the kernels: %s", describe(err))
	}
	return nil
}

// function returns the kernel's handle (m's lock: modules').
func (m *module) function(name string) (cu.Function, error) {
	modules.Lock()
	defer modules.Unlock()
	if fn, ok := m.funcs[name]; ok {
		return fn, nil
	}
	fn, err := m.mod.Function(name)
	if err != nil {
		return fn, fmt.Errorf("cuda: kernel %s: %s", name, describe(err))
	}
	m.funcs[name] = fn
	return fn, nil
}

// enter makes the GPU's context current on this OS thread (pushed over
// whatever was current); the caller defers the returned function, which
// pops it, restoring the caller's context.
func (g *GPU) enter() (func(), error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, errors.New("cuda: the GPU device is closed")
	}
	if g.sticky != nil {
		g.mu.Unlock()
		return nil, g.sticky
	}
	runtime.LockOSThread()
	if err := cu.PushCurrentCtx(g.ctx); err != nil {
		runtime.UnlockOSThread()
		g.mu.Unlock()
		return nil, fmt.Errorf("cuda: making the context of device %d current: %s", g.ordinal, describe(err))
	}
	return func() {
		_, _ = cu.PopCurrentCtx()
		runtime.UnlockOSThread()
		g.mu.Unlock()
	}, nil
}

// Name returns the GPU's name.
func (g *GPU) Name() string { return g.info.Name }

// Info describes the GPU and its driver.
func (g *GPU) Info() Info { return g.info }

// Ordinal is the device's ordinal.
func (g *GPU) Ordinal() int { return g.ordinal }

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

func (g *GPU) CopyIn(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src)), g.stream); err != nil {
		return g.fail("copying to the device", err)
	}
	return g.wait("copying to the device")
}

func (g *GPU) CopyOut(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst)), g.stream); err != nil {
		return g.fail("copying from the device", err)
	}
	return g.wait("copying from the device")
}

func (g *GPU) CopyDev(dst, src Ptr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, g.stream); err != nil {
		return g.fail("copying on the device", err)
	}
	return nil
}

func (g *GPU) Memset(dst Ptr, b byte, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemsetD8Async(cu.DevicePtr(dst), b, bytes, g.stream); err != nil {
		return g.fail("setting device memory", err)
	}
	return nil
}

func (g *GPU) Launch(kernel string, grid, block int, args ...uint64) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	fn, err := g.mod.function(kernel)
	if err != nil {
		return err
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i]) // cu copies the values to C memory
	}
	if err := fn.Launch(grid, 1, 1, block, 1, 1, 0, g.stream, params); err != nil {
		return g.fail(fmt.Sprintf("launching kernel %s (%d blocks of %d threads)", kernel, grid, block), err)
	}
	g.inflight = append(g.inflight, kernel)
	if g.blocking {
		return g.wait("running kernel " + kernel)
	}
	return nil
}

// Sync waits for the work issued so far and reports its errors.
func (g *GPU) Sync() error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	return g.wait("waiting for the device")
}

// wait synchronises the stream (context entered); an error names the
// kernels launched since the last successful wait.
func (g *GPU) wait(what string) error {
	if err := g.stream.Synchronize(); err != nil {
		if len(g.inflight) > 0 {
			what += " after kernels " + strings.Join(dedupe(g.inflight), ", ")
		}
		return g.fail(what, err)
	}
	g.inflight = g.inflight[:0]
	return nil
}

// fail wraps a driver error of device g; a sticky one poisons the GPU.
func (g *GPU) fail(what string, err error) error {
	msg := fmt.Sprintf("cuda: device %d: %s: %s", g.ordinal, what, describe(err))
	if code, ok := errCode(err); ok && stickyCodes[code] {
		msg += "; this error is sticky: the CUDA context of this process is unusable and the process must be restarted (GRAPHFERRY_CUDA_LAUNCH_BLOCKING=1 names the failing kernel exactly)"
		g.sticky = errors.New(msg)
		g.inflight = g.inflight[:0]
		return g.sticky
	}
	g.inflight = g.inflight[:0]
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

// Close waits for the stream, destroys it, drops the module (unloaded with
// its context's last GPU) and releases the primary context. A closed GPU
// refuses every call; closing twice is a no-op.
func (g *GPU) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer g.mu.Unlock()
	if err := cu.PushCurrentCtx(g.ctx); err != nil {
		return fmt.Errorf("cuda: closing device %d: %s", g.ordinal, describe(err))
	}
	var errs []error
	if g.sticky == nil {
		if err := g.stream.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("cuda: closing device %d: %s", g.ordinal, describe(err)))
		}
	}
	if err := g.stream.Destroy(); err != nil {
		errs = append(errs, fmt.Errorf("cuda: destroying the stream: %s", describe(err)))
	}
	errs = append(errs, releaseModule(g.ctx, g.mod))
	_, _ = cu.PopCurrentCtx()
	if err := g.dev.ReleasePrimaryCtx(); err != nil {
		errs = append(errs, fmt.Errorf("cuda: releasing the primary context: %s", describe(err)))
	}
	return errors.Join(errs...)
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
	714: true, // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: true, // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: true, // CUDA_ERROR_MISALIGNED_ADDRESS
	717: true, // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: true, // CUDA_ERROR_INVALID_PC
	719: true, // CUDA_ERROR_LAUNCH_FAILED
	710: true, // CUDA_ERROR_ASSERT
}
