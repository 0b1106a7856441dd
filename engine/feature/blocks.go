package feature

import (
	"fmt"
	"hash/crc32"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/graphferry/graphferry/engine/errs"
)

// Verified as read: a memory-mapped data file whose metadata records a
// CRC-32C per fixed-size block (fileio.BlockSums) has its blocks checked
// the first time a Gather or Copy reads them; a block whose sum differs is
// an error wrapping errs.ErrIO that names the file and the block, like a
// truncation. Each block is checked once per mapping (a bit per block), so
// the cost is one CRC pass over the bytes an epoch touches, spread over the
// reads, instead of verify's pass over every file at open.

// BlockSums is the per-block sums of one file and the blocks checked so
// far: attached to the file's mapping by SetBlockSums, found again by
// BlockSumsOf, and shared by every reader of the file (the mapping's
// Gather and Copy, the disk tier's direct reads), so that a block is
// checked once whichever way it is first read. Safe for concurrent use.
type BlockSums struct {
	size    int      // block bytes, a power of two
	shift   uint     // log2(size)
	sums    []uint32 // CRC-32C of each block (the last may be short)
	checked []atomic.Uint64
	length  int64  // the file's bytes when the sums were attached
	path    string // the file, for messages
	record  string // the metadata file that records the sums
	data    []byte // the mapping
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SetBlockSums attaches per-block sums to the registered mapping (see
// RegisterMapping) that data lies in, starting at offset base of it (a
// .npy's array after its header, say): blocks of blockSize bytes (a power
// of two) of the whole mapped file, sums[i] the CRC-32C of block i, as
// record (the metadata file's name, for messages) says. From then on
// Gather and Copy check each block the first time they read it.
func SetBlockSums(data []byte, base, blockSize int, sums []uint32, record string) error {
	if len(data) == 0 {
		return nil
	}
	if blockSize < 512 || blockSize&(blockSize-1) != 0 {
		return fmt.Errorf("feature: block size %d is not a power of two >= 512", blockSize)
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data))) - uintptr(base)
	mapsMu.Lock()
	defer mapsMu.Unlock()
	i := sort.Search(len(maps), func(i int) bool { return maps[i].lo >= lo })
	if i == len(maps) || maps[i].lo != lo || maps[i].hi < lo+uintptr(base+len(data)) {
		return fmt.Errorf("feature: SetBlockSums of memory that is not a registered mapping")
	}
	n := int(maps[i].hi - maps[i].lo)
	if want := (n + blockSize - 1) / blockSize; len(sums) != want {
		return fmt.Errorf("feature: %d block sums for %d bytes in blocks of %d (want %d)", len(sums), n, blockSize, want)
	}
	// The whole mapping, from data's position in it (the map is not Go
	// memory: stepping back base bytes stays inside it).
	whole := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), -base)), n)
	t := &BlockSums{size: blockSize, sums: sums, checked: make([]atomic.Uint64, (len(sums)+63)/64),
		length: int64(n), path: maps[i].path, record: record, data: whole}
	for 1<<t.shift < blockSize {
		t.shift++
	}
	maps[i].blocks = t
	return nil
}

// BlockSumsOf returns the block sums attached to the mapping that data
// lies in (SetBlockSums), or nil when it has none (a dataset written
// before they were recorded, memory that is not a mapping).
func BlockSumsOf(data []byte) *BlockSums {
	if m, ok := blocksOf(data); ok {
		return m.blocks
	}
	return nil
}

// Size returns the block size in bytes (a power of two).
func (t *BlockSums) Size() int { return t.size }

// Len returns the number of blocks.
func (t *BlockSums) Len() int { return len(t.sums) }

// Bounds returns the file bytes [lo, hi) of block i (the last block may be
// short).
func (t *BlockSums) Bounds(i int) (lo, hi int64) {
	lo = int64(i) << t.shift
	return lo, min(lo+int64(t.size), t.length)
}

// Block returns the block holding file byte off.
func (t *BlockSums) Block(off int64) int { return int(off >> t.shift) }

// Checked says whether block i was checked already.
func (t *BlockSums) Checked(i int) bool {
	return t.checked[i>>6].Load()&(uint64(1)<<(i&63)) != 0
}

// Reset forgets which blocks were checked: each is checked again the next
// time it is read (the file may hold other bytes now: see
// dataset.Dataset.Recheck).
func (t *BlockSums) Reset() {
	for i := range t.checked {
		t.checked[i].Store(0)
	}
}

// Check compares the CRC-32C of block, the bytes Bounds(i) of the file as
// a reader found them, with the recorded sum: equal marks block i checked;
// different is an error wrapping errs.ErrIO that names the file and the
// block (a block of the wrong length is an error too).
func (t *BlockSums) Check(i int, block []byte) error {
	lo, hi := t.Bounds(i)
	if int64(len(block)) != hi-lo {
		return fmt.Errorf("feature: block %d of %s: %d bytes to check, want %d", i, t.path, len(block), hi-lo)
	}
	if got := crc32.Checksum(block, castagnoli); got != t.sums[i] {
		return fmt.Errorf("%s: block %d (bytes %d to %d) has CRC-32C %08x, %s says %08x: the file is damaged or was changed (%w)",
			t.path, i, lo, hi-1, got, t.record, t.sums[i], errs.ErrIO)
	}
	w, bit := i>>6, uint64(1)<<(i&63)
	for {
		old := t.checked[w].Load()
		if old&bit != 0 || t.checked[w].CompareAndSwap(old, old|bit) {
			return nil
		}
	}
}

// blocksOf returns the mapping holding b and its block table, if it has one.
func blocksOf(b []byte) (mapping, bool) {
	if len(b) == 0 {
		return mapping{}, false
	}
	m, ok := findMapping(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	return m, ok && m.blocks != nil
}

// checkBlock checks block i of mapping m if it was not yet.
func (m mapping) checkBlock(i int) error {
	t := m.blocks
	if t.Checked(i) {
		return nil
	}
	lo, hi := t.Bounds(i)
	var err error
	if Guard(func() { err = t.Check(i, t.data[lo:hi]) }) != nil {
		// The file was truncated under the mapping: no verdict on the
		// block; the read itself faults (an error naming the file) if its
		// own bytes are gone, and reads what is left otherwise, as before.
		return nil
	}
	return err
}

// checkRows checks the blocks that rows ids (of rb bytes each) of src
// touch, where src is a mapping with block sums (otherwise nothing).
func checkRows(src []byte, ids []int64, rb int) error {
	m, ok := blocksOf(src)
	if !ok || rb == 0 {
		return nil
	}
	base := int(uintptr(unsafe.Pointer(unsafe.SliceData(src))) - m.lo)
	shift := m.blocks.shift
	for _, id := range ids {
		off := base + int(id)*rb
		for b := off >> shift; b <= (off+rb-1)>>shift; b++ {
			if err := m.checkBlock(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRange checks every block that src (inside a mapping with block
// sums) overlaps.
func checkRange(src []byte) error {
	m, ok := blocksOf(src)
	if !ok {
		return nil
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(src))) - m.lo)
	for b := off >> m.blocks.shift; b <= (off+len(src)-1)>>m.blocks.shift; b++ {
		if err := m.checkBlock(b); err != nil {
			return err
		}
	}
	return nil
}
