package cuda

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/stretchr/testify/require"
)

// The emulated device: cuda/emu/server.cpp, which compiles the kernels as
// host C++, runs in a child process; emuDevice speaks its protocol.

var emuServer string // path of the built server

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gfemu")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	emuServer = filepath.Join(dir, "gfemu")
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "c++"
	}
	// -ffp-contract=off: the emulated __dmul_rn & co. must stay single
	// rounded operations, as on the device.
	cmd := exec.Command(cxx, "-std=c++17", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror",
		"-o", emuServer, "emu/server.cpp")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building the kernel emulator with %s: %v\n", cxx, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// emuDevice is the emulated Device: one server process whose memory is the
// device's; requests are serialised (safe for concurrent use), and every
// operation has completed when its call returns, so streams are handles
// only and events are always complete. Pinned host memory is a file both
// processes map (so kernels read what the Go side writes, without copies);
// registering Go memory in place is not possible across processes, so
// RegisterHost refuses and callers copy into AllocHost memory.
type emuDevice struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out io.Reader
	mu  sync.Mutex
	// Allocs counts Alloc calls (the pool test reads it).
	Allocs int
	// Total is the device memory MemInfo reports; used counts Alloc's.
	Total   int64
	used    int64
	sizes   map[Ptr]int64
	handles atomic.Uintptr
	// Launches counts kernel launches by name.
	Launches map[string]int
}

func startEmu(t testing.TB) *emuDevice {
	cmd := exec.Command(emuServer)
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	d := &emuDevice{cmd: cmd, in: bufio.NewWriter(w), out: bufio.NewReader(r), Total: 1 << 30, sizes: map[Ptr]int64{}, Launches: map[string]int{}}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func (d *emuDevice) put(vals ...any) {
	for _, v := range vals {
		_ = binary.Write(d.in, binary.LittleEndian, v)
	}
}

func (d *emuDevice) status(op string) error {
	if err := d.in.Flush(); err != nil {
		return err
	}
	var st uint32
	if err := binary.Read(d.out, binary.LittleEndian, &st); err != nil {
		return fmt.Errorf("emulator: %s: %w", op, err)
	}
	if st != 0 {
		return fmt.Errorf("emulator: %s failed with status %d", op, st)
	}
	return nil
}

func (d *emuDevice) Ordinal() int { return 0 }

func (d *emuDevice) MemInfo() (free, total int64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Total - d.used, d.Total, nil
}

func (d *emuDevice) Alloc(bytes int64) (Ptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.used+bytes > d.Total {
		return 0, fmt.Errorf("emulator: out of memory: %d bytes requested, %d of %d in use", bytes, d.used, d.Total)
	}
	d.Allocs++
	d.put(uint32(1), uint64(bytes))
	if err := d.status("alloc"); err != nil {
		return 0, err
	}
	var p uint64
	err := binary.Read(d.out, binary.LittleEndian, &p)
	d.used += bytes
	d.sizes[Ptr(p)] = bytes
	return Ptr(p), err
}

func (d *emuDevice) Free(p Ptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.sizes[p]
	if !ok {
		return fmt.Errorf("emulator: free of %#x, not allocated", uint64(p))
	}
	delete(d.sizes, p)
	d.used -= n
	d.put(uint32(2), uint64(p))
	return d.status("free")
}

// AllocHost maps a file of bytes in both processes.
func (d *emuDevice) AllocHost(bytes int64) (HostMem, error) {
	f, err := os.CreateTemp("", "gfemu-pinned")
	if err != nil {
		return HostMem{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := f.Truncate(bytes); err != nil {
		return HostMem{}, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(bytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return HostMem{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(9), uint32(len(f.Name())))
	_, _ = d.in.WriteString(f.Name())
	d.put(uint64(bytes))
	if err := d.status("map"); err != nil {
		_ = syscall.Munmap(b)
		return HostMem{}, err
	}
	var p uint64
	err = binary.Read(d.out, binary.LittleEndian, &p)
	return HostMem{Bytes: b, Ptr: Ptr(p)}, err
}

func (d *emuDevice) FreeHost(h HostMem) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(10), uint64(h.Ptr), uint64(len(h.Bytes)))
	return errors.Join(d.status("unmap"), syscall.Munmap(h.Bytes))
}

func (d *emuDevice) RegisterHost([]byte) (Ptr, error) {
	return 0, fmt.Errorf("emulator: registering host memory: %w", errors.ErrUnsupported)
}

func (d *emuDevice) UnregisterHost([]byte) error { return errors.ErrUnsupported }

func (d *emuDevice) NewStream() (Stream, error) {
	return &emuStream{d: d, h: mem.Stream(d.handles.Add(1))}, nil
}

func (d *emuDevice) NewEvent() (Event, error) { return emuEvent(d.handles.Add(1)), nil }

// WaitOn and Quiesce: the emulator's work is complete when a call returns.
func (d *emuDevice) WaitOn(mem.Stream, mem.Event) error { return nil }
func (d *emuDevice) Quiesce() error                     { return nil }

func (d *emuDevice) CopyIn(dst Ptr, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(3), uint64(dst), uint64(len(src)))
	_, _ = d.in.Write(src)
	return d.status("write")
}

func (d *emuDevice) CopyOut(dst []byte, src Ptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(4), uint64(src), uint64(len(dst)))
	if err := d.status("read"); err != nil {
		return err
	}
	_, err := io.ReadFull(d.out, dst)
	return err
}

func (d *emuDevice) CopyDev(dst, src Ptr, bytes int64) error {
	buf := make([]byte, bytes)
	if err := d.CopyOut(buf, src); err != nil {
		return err
	}
	return d.CopyIn(dst, buf)
}

func (d *emuDevice) Memset(dst Ptr, b byte, bytes int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(5), uint64(dst), uint64(b), uint64(bytes))
	return d.status("memset")
}

func (d *emuDevice) Launch(kernel string, grid, block int, args ...uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Launches[kernel]++
	d.put(uint32(6), uint32(len(kernel)))
	_, _ = d.in.WriteString(kernel)
	d.put(uint32(grid), uint32(block), uint32(len(args)), args)
	return d.status("launch " + kernel)
}

func (d *emuDevice) log(x []float64) ([]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.put(uint32(7), uint64(len(x)), x)
	if err := d.status("log"); err != nil {
		return nil, err
	}
	out := make([]float64, len(x))
	err := binary.Read(d.out, binary.LittleEndian, out)
	return out, err
}

func (d *emuDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil {
		return nil
	}
	d.put(uint32(8))
	_ = d.status("quit")
	err := d.cmd.Wait()
	d.cmd = nil
	return err
}

// emuStream is a stream of the emulated device: its work completes as it
// is issued.
type emuStream struct {
	d *emuDevice
	h mem.Stream
}

func (s *emuStream) Handle() mem.Stream                      { return s.h }
func (s *emuStream) CopyIn(dst Ptr, src []byte) error        { return s.d.CopyIn(dst, src) }
func (s *emuStream) CopyOut(dst []byte, src Ptr) error       { return s.d.CopyOut(dst, src) }
func (s *emuStream) CopyDev(dst, src Ptr, bytes int64) error { return s.d.CopyDev(dst, src, bytes) }
func (s *emuStream) Memset(dst Ptr, b byte, n int64) error   { return s.d.Memset(dst, b, n) }
func (s *emuStream) Launch(k string, grid, block int, args ...uint64) error {
	return s.d.Launch(k, grid, block, args...)
}
func (s *emuStream) Wait(mem.Event) error { return nil }
func (s *emuStream) Sync() error          { return nil }
func (s *emuStream) Close() error         { return nil }

// emuEvent is an event of the emulated device: always complete.
type emuEvent uintptr

func (e emuEvent) Handle() mem.Event         { return mem.Event(e) }
func (e emuEvent) RecordOn(mem.Stream) error { return nil }
func (e emuEvent) Done() (bool, error)       { return true, nil }
func (e emuEvent) Sync() error               { return nil }
func (e emuEvent) Close() error              { return nil }

// TestKernelLogMatchesGo: the kernels' gf_log is bit for bit Go's math.Log
// on every value the exponential keys take (U = m * 2^-53, m in [1, 2^53]).
func TestKernelLogMatchesGo(t *testing.T) {
	d := startEmu(t)
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 0, 200000)
	for i := 0; i < cap(x)-4; i++ {
		m := r.Uint64()>>11 + 1
		if i%2 == 0 {
			m >>= r.UintN(53) // small U too: all the binades
			m++
		}
		x = append(x, float64(m)*0x1p-53)
	}
	x = append(x, 1, 0x1p-53, math.Sqrt2/2, math.Nextafter(math.Sqrt2/2, 1))
	got, err := d.log(x)
	require.NoError(t, err)
	for i, v := range x {
		require.Equal(t, math.Float64bits(math.Log(v)), math.Float64bits(got[i]), "log(%v)", v)
	}
}
