package mem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// What can go wrong with AdviseHuge on Linux, where the advice is real:
// advising bytes outside the slice (a neighbour's memory, or a partial huge
// page the caller never gave us), skipping whole pages inside it, faulting
// on memory it may only read, and losing writes made while the kernel
// collapses pages in use. The advised range is read back from
// /proc/self/smaps: madvise(MADV_HUGEPAGE) marks the pages' mapping with the
// "hg" flag whether or not huge pages are free, so the flag shows exactly
// which bytes were advised, independently of what MADV_COLLAPSE managed.

// vma is one mapping of /proc/self/smaps: [lo, hi) and whether it carries
// MADV_HUGEPAGE's flag.
type vma struct {
	lo, hi uintptr
	hg     bool
}

func readSmaps(t *testing.T) []vma {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	var out []vma
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, ok := strings.Cut(f[0], "-")
			require.True(t, ok, line)
			a, err := strconv.ParseUint(lo, 16, 64)
			require.NoError(t, err, line)
			b, err := strconv.ParseUint(hi, 16, 64)
			require.NoError(t, err, line)
			out = append(out, vma{lo: uintptr(a), hi: uintptr(b)})
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(out) > 0 {
			out[len(out)-1].hg = strings.Contains(" "+flags+" ", " hg ")
		}
	}
	return out
}

// advisedIn returns the sub-ranges of [lo, hi) marked with the hg flag,
// merged, as offsets from origin.
func advisedIn(t *testing.T, lo, hi, origin uintptr) [][2]int {
	t.Helper()
	var out [][2]int
	for _, v := range readSmaps(t) {
		a, b := max(v.lo, lo), min(v.hi, hi)
		if a >= b || !v.hg {
			continue
		}
		x, y := int(a)-int(origin), int(b)-int(origin)
		if n := len(out); n > 0 && out[n-1][1] == x {
			out[n-1][1] = y
			continue
		}
		out = append(out, [2]int{x, y})
	}
	return out
}

// region is an anonymous private mapping with a huge-page boundary (base)
// inside and at least one spare huge page after the requested size, so
// that the bytes on both sides of a slice are ours to inspect.
type region struct {
	raw  []byte
	base uintptr
	mem  []byte // pages+1 huge pages from base
}

// advised returns the advised ranges of the whole mapping, as offsets from
// base.
func (r *region) advised(t *testing.T) [][2]int {
	start := uintptr(unsafe.Pointer(&r.raw[0]))
	return advisedIn(t, start, start+uintptr(len(r.raw)), r.base)
}

func mapRegion(t *testing.T, pages int, prot int) *region {
	t.Helper()
	raw, err := syscall.Mmap(-1, 0, (pages+2)*hugePage, prot, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(raw) })
	start := uintptr(unsafe.Pointer(&raw[0]))
	base := (start + hugePage - 1) &^ (hugePage - 1)
	off := int(base - start)
	return &region{raw: raw, base: base, mem: raw[off : off+(pages+1)*hugePage]}
}

// thpHonoured skips the test unless madvise(MADV_HUGEPAGE) shows in smaps
// on this machine (no THP in the kernel, THP disabled for the process by
// prctl, or base pages other than 4 KiB, where hugePage is not the huge
// page size).
func thpHonoured(t *testing.T) {
	t.Helper()
	if os.Getpagesize() != 4096 {
		t.Skipf("base pages are %d bytes, not 4 KiB: AdviseHuge's 2 MiB is not this system's huge page", os.Getpagesize())
	}
	raw, err := syscall.Mmap(-1, 0, 2*hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(raw)) }()
	if err := syscall.Madvise(raw, madvHugepage); err != nil {
		t.Skipf("madvise(MADV_HUGEPAGE) refused here (%v): transparent huge pages are not available", err)
	}
	start := uintptr(unsafe.Pointer(&raw[0]))
	if got := advisedIn(t, start, start+2*hugePage, start); len(got) != 1 {
		t.Skipf("madvise(MADV_HUGEPAGE) does not show as the hg flag in /proc/self/smaps here (got %v)", got)
	}
}

func TestAdviseHugeAdvisesWholePagesInsideOnly(t *testing.T) {
	thpHonoured(t)
	const H = hugePage
	for _, tc := range []struct {
		name        string
		off, length int // the slice, in bytes from the region's base
		want        [][2]int
	}{
		{"aligned", 0, 2 * H, [][2]int{{0, 2 * H}}},
		{"unaligned both ends", 100, 3*H + 5, [][2]int{{H, 3 * H}}},
		{"unaligned end", 0, 2*H + 4096, [][2]int{{0, 2 * H}}},
		{"unaligned start", 4096, 2*H - 4096, [][2]int{{H, 2 * H}}},
		{"one byte short of a page", 0, H - 1, nil},
		{"longer than a page, no whole page inside", H / 2, H + H/4, nil},
		{"exactly one page, unaligned", 1, H, nil},
		{"empty", H, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mapRegion(t, 4, syscall.PROT_READ|syscall.PROT_WRITE)
			for i := range r.mem {
				r.mem[i] = byte(i*131 + 7)
			}
			s := r.mem[tc.off : tc.off+tc.length]
			AdviseHuge(s)
			require.Equal(t, tc.want, r.advised(t), "advised byte ranges of the mapping, from its first huge-page boundary")
			for i, b := range r.mem {
				if b != byte(i*131+7) {
					require.Failf(t, "content changed", "byte %d = %d", i, b)
				}
			}
		})
	}
}

// The length in bytes is the element count times the element size: with
// 24-byte elements a slice of 3 huge pages' worth of bytes is advised as
// such (a count taken as bytes would advise nothing here).
func TestAdviseHugeCountsElementBytes(t *testing.T) {
	thpHonoured(t)
	type elem [3]int64
	r := mapRegion(t, 4, syscall.PROT_READ|syscall.PROT_WRITE)
	n := 3 * hugePage / int(unsafe.Sizeof(elem{}))
	s := unsafe.Slice((*elem)(unsafe.Pointer(&r.mem[8])), n) // 3 pages from base+8: whole pages [H, 3H)
	AdviseHuge(s)
	require.Equal(t, [][2]int{{hugePage, 3 * hugePage}}, r.advised(t))
}

// Memory the process may only read (a read-only mapping of a dataset
// file, a caller's read-only array): advice neither faults nor changes the
// file.
func TestAdviseHugeReadOnlyFileMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.bin")
	want := make([]byte, 3*hugePage+12345)
	for i := range want {
		want[i] = byte(i*7 + 3)
	}
	require.NoError(t, os.WriteFile(path, want, 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(m)) }()

	AdviseHuge(m)
	AdviseHuge(m[5:])
	AdviseHuge(unsafe.Slice((*int32)(unsafe.Pointer(&m[4])), (len(m)-4)/4))
	require.True(t, bytes.Equal(want, m), "mapped contents changed")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "file changed")

	// Read-only anonymous memory (all zero) the same.
	r := mapRegion(t, 3, syscall.PROT_READ)
	AdviseHuge(r.mem[7:])
	require.Equal(t, -1, bytes.IndexFunc(r.mem, func(c rune) bool { return c != 0 }))
}

// Memory already in use is collapsed in place (MADV_COLLAPSE) while other
// goroutines write to it, as a sampler's dense table is: no write may be
// lost, whether the kernel collapses, retries or refuses (EAGAIN when the
// pages change under it, ENOMEM when no huge page is free: not errors).
func TestAdviseHugeWhileWritten(t *testing.T) {
	const words = 3 * hugePage / 8
	s := make([]uint64, words)
	const writers = 4
	var stop atomic.Bool
	var wg sync.WaitGroup
	counts := make([]uint64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Writer w owns the words i with i%writers == w and adds 1 to
			// each in turn, so each word's final value is known.
			var rounds uint64
			for !stop.Load() {
				for i := w; i < words; i += writers * 61 {
					s[i]++
				}
				rounds++
			}
			counts[w] = rounds
		}()
	}
	for range 20 {
		AdviseHuge(s)
		AdviseHuge(s[1:])
	}
	stop.Store(true)
	wg.Wait()
	for i, x := range s {
		var want uint64
		if w := i % writers; (i-w)%(writers*61) == 0 {
			want = counts[w]
		}
		if x != want {
			require.Failf(t, "write lost", "s[%d] = %d, want %d", i, x, want)
		}
	}
}
