//go:build cuda

package cuda

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// kernelsPTX is cuda/kernels compiled to PTX for compute_80 by make lib-cuda
// (cuda/tools/ptx.py, NVRTC); the driver JIT-compiles it for the GPU at hand.
//
//go:embed kernels.ptx
var kernelsPTX string

// GPU is the Device of one CUDA GPU: its primary context (the one PyTorch
// uses, so device pointers are shared with it), the kernels module, one
// non-blocking stream on which every operation is issued in order. Host
// copies wait for the stream (Go memory must not be read after a call
// returns), kernel launches do not.
type GPU struct {
	mu      sync.Mutex
	dev     cu.Device
	ctx     cu.CUContext
	mod     cu.Module
	stream  cu.Stream
	funcs   map[string]cu.Function
	closed  bool
	ordinal int
}

// OpenGPU retains the primary context of GPU ordinal, loads the kernels and
// creates the stream.
func OpenGPU(ordinal int) (*GPU, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, fmt.Errorf("cuda: retaining the primary context of device %d: %w", ordinal, err)
	}
	g := &GPU{dev: dev, ctx: ctx, funcs: map[string]cu.Function{}, ordinal: ordinal}
	if err := cu.SetCurrentContext(ctx); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: making the primary context current: %w", err)
	}
	if g.mod, err = cu.LoadData(kernelsPTX); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: loading the kernels' PTX (JIT for this GPU): %w", err)
	}
	if g.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		_ = dev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: creating a stream: %w", err)
	}
	return g, nil
}

// enter makes the context current on this OS thread; the caller defers the
// returned function.
func (g *GPU) enter() (func(), error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, errors.New("cuda: the GPU device is closed")
	}
	runtime.LockOSThread()
	leave := func() {
		runtime.UnlockOSThread()
		g.mu.Unlock()
	}
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		leave()
		return nil, fmt.Errorf("cuda: making the context current: %w", err)
	}
	return leave, nil
}

// Name returns the GPU's name.
func (g *GPU) Name() string {
	n, err := g.dev.Name()
	if err != nil {
		return fmt.Sprintf("GPU %d", g.ordinal)
	}
	return n
}

func (g *GPU) Alloc(bytes int64) (Ptr, error) {
	leave, err := g.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	p, err := cu.MemAlloc(max(bytes, 1))
	return Ptr(p), err
}

func (g *GPU) Free(p Ptr) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cu.MemFree(cu.DevicePtr(p))
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
		return err
	}
	return g.stream.Synchronize()
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
		return err
	}
	return g.stream.Synchronize()
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
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, g.stream)
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
	return cu.MemsetD8Async(cu.DevicePtr(dst), b, bytes, g.stream)
}

func (g *GPU) Launch(kernel string, grid, block int, args ...uint64) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	fn, ok := g.funcs[kernel]
	if !ok {
		if fn, err = g.mod.Function(kernel); err != nil {
			return fmt.Errorf("cuda: kernel %s: %w", kernel, err)
		}
		g.funcs[kernel] = fn
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i]) // cu copies the values to C memory
	}
	return fn.Launch(grid, 1, 1, block, 1, 1, 0, g.stream, params)
}

// Sync waits for the work issued so far.
func (g *GPU) Sync() error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	return g.stream.Synchronize()
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

// Close destroys the stream and releases the primary context (the module
// goes with the context when its last user releases it).
func (g *GPU) Close() error {
	leave, err := g.enter()
	if err != nil {
		return nil // already closed
	}
	defer leave()
	g.closed = true
	return errors.Join(g.stream.Synchronize(), g.stream.Destroy(), g.dev.ReleasePrimaryCtx())
}

// Open returns the GPU device of the given ordinal (OpenGPU).
func Open(ordinal int) (Device, error) {
	g, err := OpenGPU(ordinal)
	if err != nil {
		return nil, err
	}
	return g, nil
}
