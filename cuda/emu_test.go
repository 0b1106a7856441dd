package cuda

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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

type emuDevice struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out io.Reader
	// Allocs counts Alloc calls (the pool test reads it).
	Allocs int
}

func startEmu(t testing.TB) *emuDevice {
	cmd := exec.Command(emuServer)
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	d := &emuDevice{cmd: cmd, in: bufio.NewWriter(w), out: bufio.NewReader(r)}
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

func (d *emuDevice) Alloc(bytes int64) (Ptr, error) {
	d.Allocs++
	d.put(uint32(1), uint64(bytes))
	if err := d.status("alloc"); err != nil {
		return 0, err
	}
	var p uint64
	err := binary.Read(d.out, binary.LittleEndian, &p)
	return Ptr(p), err
}

func (d *emuDevice) Free(p Ptr) error {
	d.put(uint32(2), uint64(p))
	return d.status("free")
}

func (d *emuDevice) CopyIn(dst Ptr, src []byte) error {
	d.put(uint32(3), uint64(dst), uint64(len(src)))
	_, _ = d.in.Write(src)
	return d.status("write")
}

func (d *emuDevice) CopyOut(dst []byte, src Ptr) error {
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
	d.put(uint32(5), uint64(dst), uint64(b), uint64(bytes))
	return d.status("memset")
}

func (d *emuDevice) Launch(kernel string, grid, block int, args ...uint64) error {
	d.put(uint32(6), uint32(len(kernel)))
	_, _ = d.in.WriteString(kernel)
	d.put(uint32(grid), uint32(block), uint32(len(args)), args)
	return d.status("launch " + kernel)
}

func (d *emuDevice) log(x []float64) ([]float64, error) {
	d.put(uint32(7), uint64(len(x)), x)
	if err := d.status("log"); err != nil {
		return nil, err
	}
	out := make([]float64, len(x))
	err := binary.Read(d.out, binary.LittleEndian, out)
	return out, err
}

func (d *emuDevice) Close() error {
	if d.cmd == nil {
		return nil
	}
	d.put(uint32(8))
	_ = d.status("quit")
	err := d.cmd.Wait()
	d.cmd = nil
	return err
}

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
