package feature

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/mem"
)

// Store holds named node-data arrays (row i = internal node i). Safe for
// concurrent reads; Set/Delete lock.
type Store struct {
	numNodes int64

	mu     sync.RWMutex
	arrays map[string]entry
	closed bool
}

type entry struct {
	t       mem.Tensor
	release func()
	file    string    // the file t.Data maps, if any (see RegisterMapping)
	local   bool      // rows are not the store's nodes (see SetLocal)
	src     RowSource // reads the rows instead of t.Data (see SetSource), or nil
}

// NewStore returns an empty store for numNodes nodes (a negative count gives
// a store on which every Set fails).
func NewStore(numNodes int64) *Store {
	return &Store{numNodes: numNodes, arrays: map[string]entry{}}
}

// NumNodes returns the row count every array must have.
func (s *Store) NumNodes() int64 { return s.numNodes }

// Set stores t under name. t.Shape[0] must equal the store's node count;
// any mem.DType except Invalid is accepted and kept as is (float32, float16
// and bfloat16 features, int64 labels, ...). The store does not copy
// t.Data. release (may be nil) is called exactly once when the array is
// replaced, deleted or the store closed; when Set returns an error the store
// has not taken t and does not call release.
func (s *Store) Set(name string, t mem.Tensor, release func()) error {
	return s.set(name, t, release, false)
}

// set is Set, or SetLocal when local.
func (s *Store) set(name string, t mem.Tensor, release func(), local bool) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := checkTensor("node data "+quote(name), t); err != nil {
		return err
	}
	if !local && t.Shape[0] != s.numNodes {
		return fmt.Errorf("feature: node data %q has %d rows (Shape[0]), want the store's %d nodes", name, t.Shape[0], s.numNodes)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("feature: store is closed")
	}
	old, had := s.arrays[name]
	s.arrays[name] = entry{t: t, release: release, file: MappedFile(t.Data), local: local}
	s.mu.Unlock()
	if had {
		old.free()
	}
	return nil
}

// free releases what the store held of e: its source and its array.
func (e entry) free() {
	if e.src != nil {
		e.src.Close()
	}
	if e.release != nil {
		e.release()
	}
}

// SetSource makes Gather read the rows of the array name through src (the
// disk tier) instead of its memory, which Get and whole-array reads still
// use; the store closes src when the array is replaced, deleted or the
// store closed, or when another source replaces it. nil removes the
// source. Gathers in progress finish first.
func (s *Store) SetSource(name string, src RowSource) error {
	s.mu.Lock()
	e, ok := s.arrays[name]
	if !ok || s.closed {
		s.mu.Unlock()
		if src != nil {
			src.Close()
		}
		return fmt.Errorf("feature: no node data named %q", name)
	}
	if e.local {
		s.mu.Unlock()
		if src != nil {
			src.Close()
		}
		return fmt.Errorf("feature: node data %q has one row per node of its type: it has no disk tier", name)
	}
	old := e.src
	e.src = src
	s.arrays[name] = e
	s.mu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Source returns the RowSource of the array name, or nil.
func (s *Store) Source(name string) RowSource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.arrays[name].src
}

// CheckName checks that name can name node data: not empty, and without
// newline or NUL (the C API lists the names joined by newlines in a
// NUL-terminated string, so such a name could not be listed or asked for).
func CheckName(name string) error {
	if name == "" {
		return errors.New("feature: name is empty")
	}
	if i := strings.IndexAny(name, "\n\x00"); i >= 0 {
		return fmt.Errorf("feature: node data name %q holds a newline or NUL at byte %d (names are listed one per line)", name, i)
	}
	return nil
}

// File returns the file whose memory map backs the array name ("" when it
// is not a registered mapping, see RegisterMapping).
func (s *Store) File(name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.arrays[name].file
}

// Get returns the array stored under name. The returned tensor shares the
// store's memory: it stays valid only until the name is replaced or deleted
// or the store closed (use Store.Gather to read under the store's lock).
func (s *Store) Get(name string) (mem.Tensor, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.arrays[name]
	return e.t, ok
}

// Names returns the stored names, sorted.
func (s *Store) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.arrays))
	for n := range s.arrays {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Delete removes name and releases its array.
func (s *Store) Delete(name string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("feature: store is closed")
	}
	e, ok := s.arrays[name]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("feature: no node data named %q", name)
	}
	delete(s.arrays, name)
	s.mu.Unlock()
	e.free()
	return nil
}

// Close releases every array; later Sets and Deletes fail and Gets find
// nothing. Idempotent.
func (s *Store) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	arrays := s.arrays
	s.arrays = map[string]entry{}
	s.mu.Unlock()
	names := make([]string, 0, len(arrays))
	for n := range arrays {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		arrays[n].free()
	}
}

// Gather copies the rows ids of the array name into dst (see the function
// Gather), holding the store's read lock so that the array cannot be
// released meanwhile.
func (s *Store) Gather(name string, dst []byte, ids []int64, threads int) error {
	_, err := s.GatherTiers(name, dst, ids, threads)
	return err
}

// GatherTiers is Gather, and says where the rows came from: host memory
// (cold rows), or, for an array on the disk tier (SetSource), its CPU
// cache and the disk.
func (s *Store) GatherTiers(name string, dst []byte, ids []int64, threads int) (TierCounts, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.arrays[name]
	if !ok {
		return TierCounts{}, fmt.Errorf("feature: no node data named %q", name)
	}
	if e.local {
		return TierCounts{}, fmt.Errorf("feature: node data %q has %d rows, one per node of its type, not one per node: it cannot be gathered by node id", name, e.t.Shape[0])
	}
	var tc TierCounts
	var err error
	if e.src != nil {
		err = checkGather(dst, e.t, ids)
		if err == nil && len(ids) > 0 && e.t.RowBytes() > 0 {
			tc, err = e.src.ReadRows(dst, ids, threads)
		}
	} else {
		err = Gather(dst, e.t, ids, threads)
		tc = HostCounts(len(ids), e.t.RowBytes())
	}
	if err != nil {
		if e.file != "" && errors.Is(err, ErrFault) {
			return tc, fmt.Errorf("feature: gathering %q from %s: %w", name, e.file, err)
		}
		return tc, fmt.Errorf("feature: gathering %q: %w", name, err)
	}
	return tc, nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// checkTensor checks that t is a well-formed array of at least one dimension.
func checkTensor(what string, t mem.Tensor) error {
	es := t.DType.Size()
	if es == 0 {
		return fmt.Errorf("feature: %s has invalid dtype %v", what, t.DType)
	}
	if len(t.Shape) == 0 {
		return fmt.Errorf("feature: %s has no dimensions (want Shape[0] = rows)", what)
	}
	n := uint64(es)
	for i, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("feature: %s has Shape[%d] = %d (want >= 0)", what, i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("feature: %s has shape %v, too large", what, t.Shape)
		}
		n = lo
	}
	if uint64(len(t.Data)) != n {
		return fmt.Errorf("feature: %s has %d bytes of data, want %d for %v %v", what, len(t.Data), n, t.DType, t.Shape)
	}
	return nil
}

// parallelBytes is the request size above which Gather splits the rows over
// goroutines.
var parallelBytes = 1 << 20

// Gather copies rows ids (internal ids, validated against src.Shape[0]) of
// src into dst, row after row: len(dst) must be len(ids)*src.RowBytes().
// Large requests are split over row chunks copied in parallel (threads <= 0:
// GOMAXPROCS). src is only read, so concurrent Gathers are safe. src may be
// a memory-mapped file: a fault reading it (the file truncated under the
// map) is an error wrapping ErrFault and errs.ErrIO, never a crash.
func Gather(dst []byte, src mem.Tensor, ids []int64, threads int) error {
	if err := checkGather(dst, src, ids); err != nil {
		return err
	}
	rb := src.RowBytes()
	if rb == 0 || len(ids) == 0 {
		return nil
	}
	if err := checkRows(src.Data, ids, rb); err != nil { // blocks.go: verified as read
		return err
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	chunks := min(threads, len(dst)/parallelBytes, len(ids))
	return parallel(chunks, len(ids), func(lo, hi int) {
		copyRows(dst[lo*rb:hi*rb], src.Data, ids[lo:hi], rb)
	})
}

// checkGather checks Gather's arguments: a well-formed src, ids in range
// and dst of len(ids) rows.
func checkGather(dst []byte, src mem.Tensor, ids []int64) error {
	if err := checkTensor("src", src); err != nil {
		return err
	}
	rb := src.RowBytes()
	if hi, want := bits.Mul64(uint64(len(ids)), uint64(rb)); hi != 0 || uint64(len(dst)) != want {
		return fmt.Errorf("feature: len(dst) = %d, want len(ids)*RowBytes = %d*%d", len(dst), len(ids), rb)
	}
	rows := src.Shape[0]
	for i, id := range ids {
		if id < 0 || id >= rows {
			return fmt.Errorf("feature: ids[%d] = %d is out of range [0, %d)", i, id, rows)
		}
	}
	return nil
}

// Copy copies src, which may be a memory-mapped file, into dst (of the same
// length), in parallel for large copies; a fault reading src is an error
// wrapping ErrFault and errs.ErrIO, never a crash.
func Copy(dst, src []byte) error {
	if len(dst) != len(src) {
		return fmt.Errorf("feature: Copy of %d bytes into %d", len(src), len(dst))
	}
	if err := checkRange(src); err != nil { // blocks.go: verified as read
		return err
	}
	chunks := min(runtime.GOMAXPROCS(0), len(dst)/parallelBytes)
	return parallel(chunks, len(dst), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// parallel runs fn over [0, n) split into chunks pieces (at least one), each
// under Guard, and returns the first fault.
func parallel(chunks, n int, fn func(lo, hi int)) error {
	if chunks <= 1 {
		return Guard(func() { fn(0, n) })
	}
	faults := make([]error, chunks)
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			faults[c] = Guard(func() { fn(lo, hi) })
		}()
	}
	wg.Wait()
	for _, err := range faults {
		if err != nil {
			return err
		}
	}
	return nil
}

func aligned(b []byte, n uintptr) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%n == 0
}

// copyRows copies the rows ids (validated) of src into dst.
func copyRows(dst, src []byte, ids []int64, rb int) {
	switch {
	case rb == 8 && aligned(dst, 8) && aligned(src, 8):
		d := unsafe.Slice((*uint64)(unsafe.Pointer(&dst[0])), len(ids))
		s := unsafe.Slice((*uint64)(unsafe.Pointer(&src[0])), len(src)/8)
		for i, id := range ids {
			d[i] = s[id]
		}
	case rb == 4 && aligned(dst, 4) && aligned(src, 4):
		d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(ids))
		s := unsafe.Slice((*uint32)(unsafe.Pointer(&src[0])), len(src)/4)
		for i, id := range ids {
			d[i] = s[id]
		}
	case rb == 2 && aligned(dst, 2) && aligned(src, 2):
		d := unsafe.Slice((*uint16)(unsafe.Pointer(&dst[0])), len(ids))
		s := unsafe.Slice((*uint16)(unsafe.Pointer(&src[0])), len(src)/2)
		for i, id := range ids {
			d[i] = s[id]
		}
	case rb == 1:
		for i, id := range ids {
			dst[i] = src[id]
		}
	default:
		for i, id := range ids {
			o := int(id) * rb
			copy(dst[i*rb:(i+1)*rb], src[o:o+rb])
		}
	}
}
