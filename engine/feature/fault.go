package feature

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
)

// Node data may be a memory map of a file (feat.bin of a dataset). If the
// file is truncated while it is mapped, reading a page past the new end
// raises SIGBUS, which Go turns into a fatal error that kills the process
// (and Python with it). Every read of node data here therefore runs with
// debug.SetPanicOnFault on its goroutine and recovers the fault into an
// error wrapping errs.ErrIO; the registry below names the file the faulting
// address belongs to.

// mapping is one registered memory map.
type mapping struct {
	lo, hi uintptr // [lo, hi)
	path   string
	blocks *BlockSums // per-block sums (blocks.go), nil without
}

var (
	mapsMu sync.RWMutex
	maps   []mapping // sorted by lo, disjoint
)

// RegisterMapping records that data is a memory map of the file at path, so
// that a fault while reading it is reported as an error naming the file,
// and marks it as memory off the Go heap (mem.MarkOffHeap: a device backend
// may register it with its driver in place). The returned function removes
// both records; call it before unmapping data.
func RegisterMapping(data []byte, path string) (unregister func()) {
	if len(data) == 0 {
		return func() {}
	}
	unmark := mem.MarkOffHeap(data)
	m := mapping{lo: uintptr(unsafe.Pointer(unsafe.SliceData(data))), path: path}
	m.hi = m.lo + uintptr(len(data))
	mapsMu.Lock()
	i := sort.Search(len(maps), func(i int) bool { return maps[i].lo >= m.lo })
	maps = append(maps, mapping{})
	copy(maps[i+1:], maps[i:])
	maps[i] = m
	mapsMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			unmark()
			mapsMu.Lock()
			defer mapsMu.Unlock()
			for j := range maps {
				if maps[j].lo == m.lo && maps[j].hi == m.hi && maps[j].path == m.path {
					maps = append(maps[:j], maps[j+1:]...)
					return
				}
			}
		})
	}
}

// MappedFile returns the file whose registered memory map holds the bytes
// b, or "" when b is not (entirely) inside one.
func MappedFile(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	m, ok := findMapping(lo)
	if !ok || lo+uintptr(len(b)) > m.hi {
		return ""
	}
	return m.path
}

// findMapping returns the registered mapping holding addr.
func findMapping(addr uintptr) (mapping, bool) {
	mapsMu.RLock()
	defer mapsMu.RUnlock()
	i := sort.Search(len(maps), func(i int) bool { return maps[i].hi > addr })
	if i < len(maps) && maps[i].lo <= addr {
		return maps[i], true
	}
	return mapping{}, false
}

// ErrFault is wrapped (with errs.ErrIO) by the errors of reads that faulted
// on memory-mapped node data.
var ErrFault = errors.New("memory fault reading mapped data")

// faultError describes a recovered memory fault.
func faultError(addr uintptr) error {
	if m, ok := findMapping(addr); ok {
		return PastEnd(m.path, int64(addr-m.lo))
	}
	return fmt.Errorf("%w at address %#x (%w)", ErrFault, addr, errs.ErrIO)
}

// PastEnd is the error of a read of byte offset of the file at path that
// found the file shorter: it was truncated or replaced while the store
// held it. Reads through the memory map (a fault) and through the disk
// tier (a short read) give this same error, wrapping ErrFault and
// errs.ErrIO.
func PastEnd(path string, offset int64) error {
	return fmt.Errorf("%w: %s: byte %d is past the end of the file: it was truncated or replaced while mapped (%w)",
		ErrFault, path, offset, errs.ErrIO)
}

// Guard runs fn, which reads memory that may be a memory-mapped file, and
// turns a fault on that memory (SIGBUS on a truncated file) into an error
// wrapping ErrFault and errs.ErrIO instead of a crash of the process. Other
// panics go on. It covers fn's goroutine only: goroutines that fn starts
// must call Guard themselves.
func Guard(fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		// A fault under SetPanicOnFault panics with a runtime.Error that
		// carries the faulting address.
		if f, ok := r.(interface {
			error
			Addr() uintptr
		}); ok {
			err = faultError(f.Addr())
			return
		}
		panic(r)
	}()
	fn()
	return nil
}
