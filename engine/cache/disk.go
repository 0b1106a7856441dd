package cache

import (
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/graphferry/graphferry/engine/diskio"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/rowcache"
)

// DiskOptions configure a Disk.
type DiskOptions struct {
	// CacheBytes is the size of the CPU cache in front of the disk (0: no
	// cache, every row is read from disk).
	CacheBytes int64
	// Policy is the CPU cache's eviction policy.
	Policy rowcache.Policy
	// Reader configures the direct reads (backend, queue depth, request
	// size).
	Reader diskio.Options
	// Blocks are the file's per-block sums (feature.BlockSumsOf its
	// mapping), or nil: rows are then read unchecked. With them, a row
	// read from disk whose block was not checked yet has its whole block
	// read and checked first (once per block, shared with the mapping's
	// reads), so that damage is the mapping's error naming the file and
	// the block.
	Blocks *feature.BlockSums
	// Pages are the file's page sums (a CRC-32C per page of the file,
	// dataset.FeaturePageSums), or nil. With them every request read from
	// disk is checked page by page before rows are copied out of it (the
	// direct reads fetch whole pages anyway: no extra read), and Blocks is
	// not used.
	Pages *PageSums
}

// PageSums are the CRC-32C of each Size bytes of a file (the last page may
// be short), as the file Record holds them.
type PageSums struct {
	Size   int
	Sums   []uint32
	Record string
}

// pageCheck checks the pages of the disk tier's reads (diskio.Options.Check).
type pageCheck struct {
	PageSums
	path   string
	length int64 // the file's bytes when the sums were made (its last page may be short)
}

// check compares each page of data (the file's bytes from off, a multiple
// of the page size) with its sum. A page the read did not get whole (the
// file was truncated since) gets no verdict, as a block through the
// mapping: a row past the file's new end is then a short read.
func (p *pageCheck) check(off int64, data []byte) error {
	size := int64(p.Size)
	for lo := int64(0); lo < int64(len(data)); lo += size {
		i := (off + lo) / size
		if i >= int64(len(p.Sums)) {
			break
		}
		want := min(size, p.length-i*size) // the page's bytes when the sums were made
		if int64(len(data))-lo < want {
			break // cut short
		}
		hi := lo + want
		if got := crc32.Checksum(data[lo:hi], castagnoli); got != p.Sums[i] {
			return fmt.Errorf("%s: page %d (bytes %d to %d) has CRC-32C %08x, %s says %08x: the file is damaged or was changed (%w)",
				p.path, i, off+lo, off+hi-1, got, p.Record, p.Sums[i], errs.ErrIO)
		}
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// verifyChunk is the number of blocks the disk tier reads and checks at a
// time (8 MiB of 256 KiB blocks): the buffer a batch that meets many
// unchecked blocks holds.
const verifyChunk = 32

// Disk is the disk tier of one node-data array: a feature.RowSource that
// serves rows from a CPU cache (engine/rowcache) and reads the others from
// the array's file with batched direct reads (engine/diskio), inserting
// them in the cache. Attach it to a store's array with
// feature.Store.SetSource; a Tiered over that store puts the hot tier in
// front of it. Safe for concurrent reads.
type Disk struct {
	r     *diskio.Reader
	cache *rowcache.Cache
	path  string
	base  int64   // file offset of row 0
	rb    int     // row bytes
	rows  []int64 // store row -> file row, or nil (the same)
	n     int64   // rows of the array
	sums  *feature.BlockSums
}

var _ feature.RowSource = (*Disk)(nil)

// OpenDisk opens the disk tier of an array t (its dtype and shape; its
// data is not read) stored in the file at path from byte base on, row
// after row. rows, when not nil, maps the store's rows to the file's (a
// renumbered graph: row i of the store is row rows[i] of the file).
func OpenDisk(path string, base int64, t mem.Tensor, rows []int64, opt DiskOptions) (*Disk, error) {
	if len(t.Shape) == 0 || t.DType.Size() == 0 {
		return nil, fmt.Errorf("cache: disk tier of a %v%v array", t.DType, t.Shape)
	}
	rb := t.RowBytes()
	if rb <= 0 {
		return nil, errors.New("cache: disk tier of an array of empty rows")
	}
	if rows != nil && int64(len(rows)) != t.Shape[0] {
		return nil, fmt.Errorf("cache: %d row numbers for %d rows", len(rows), t.Shape[0])
	}
	end := base + t.Shape[0]*int64(rb)
	if b := opt.Blocks; b != nil && opt.Pages == nil {
		if _, bend := b.Bounds(b.Len() - 1); bend < end {
			return nil, fmt.Errorf("cache: block sums of %d bytes for %d rows of %d bytes from byte %d", bend, t.Shape[0], rb, base)
		}
	}
	var pages *pageCheck
	if p := opt.Pages; p != nil {
		if p.Size != diskio.Align {
			return nil, fmt.Errorf("cache: page sums of %d-byte pages (the disk tier reads %d-byte pages)", p.Size, diskio.Align)
		}
		if want := (end + int64(p.Size) - 1) / int64(p.Size); int64(len(p.Sums)) != want {
			// The sums cover the whole file, which ends with the array.
			return nil, fmt.Errorf("cache: %d page sums for %d rows of %d bytes from byte %d (want %d)", len(p.Sums), t.Shape[0], rb, base, want)
		}
		pages = &pageCheck{PageSums: *p, path: path, length: end}
		opt.Reader.Check = pages.check
		opt.Blocks = nil
	}
	r, err := diskio.Open(path, opt.Reader)
	if err != nil {
		return nil, err
	}
	c, err := rowcache.New(opt.CacheBytes, rb, opt.Policy)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &Disk{r: r, cache: c, path: path, base: base, rb: rb, rows: rows, n: t.Shape[0], sums: opt.Blocks}, nil
}

// Reader returns the direct reader (its backend, queue depth, whether
// reads are direct).
func (d *Disk) Reader() *diskio.Reader { return d.r }

// Cache returns the CPU cache.
func (d *Disk) Cache() *rowcache.Cache { return d.cache }

// ReadRows copies the rows ids (store rows, in range) into dst: those in
// the CPU cache from it, the others read from disk in one batch and
// inserted in the cache. A file found shorter than its rows is the error
// of a fault on its memory map (feature.PastEnd).
func (d *Disk) ReadRows(dst []byte, ids []int64, _ int) (feature.TierCounts, error) {
	var tc feature.TierCounts
	rb := d.rb
	if len(dst) != len(ids)*rb {
		return tc, fmt.Errorf("cache: len(dst) = %d, want %d rows of %d bytes", len(dst), len(ids), rb)
	}
	miss := d.cache.Lookup(ids, dst, make([]int, 0, len(ids)))
	hits := len(ids) - len(miss)
	tc.ColdRows = int64(len(ids))
	tc.CacheRows = int64(hits)
	tc.Bytes[mem.KindHost] = int64(hits) * int64(rb)
	if len(miss) == 0 {
		return tc, nil
	}
	fileRows := make([]int64, len(miss))
	for k, i := range miss {
		v := ids[i]
		if v < 0 || v >= d.n {
			return tc, fmt.Errorf("cache: ids[%d] = %d is out of range [0, %d)", i, v, d.n)
		}
		if d.rows != nil {
			v = d.rows[v]
		}
		fileRows[k] = v
	}
	vc, err := d.verify(fileRows)
	tc.DiskRequests, tc.DiskRead = vc.Requests, vc.Bytes
	if err != nil {
		return tc, err
	}
	// The misses are read straight into their rows of dst, and inserted
	// in the cache from there.
	c, err := d.r.ReadRowsAt(dst, miss, fileRows, rb, d.base)
	tc.DiskRequests += c.Requests
	tc.DiskRead += c.Bytes
	if err != nil {
		var short *diskio.ShortReadError
		if errors.As(err, &short) {
			return tc, feature.PastEnd(short.Path, short.Offset)
		}
		return tc, err
	}
	tc.DiskRows = int64(len(miss))
	tc.DiskBytes = int64(len(miss)) * int64(rb)
	d.cache.InsertAt(ids, miss, dst)
	return tc, nil
}

// verify reads and checks the blocks that the file rows rows lie in and
// that were not checked yet (none without block sums), verifyChunk blocks
// at a time; it returns what the reads cost. A block the reads find short
// (the file was truncated under the store) gets no verdict, as through the
// mapping: the rows' own reads then fail if their bytes are gone.
func (d *Disk) verify(rows []int64) (diskio.Counts, error) {
	var c diskio.Counts
	t := d.sums
	if t == nil {
		return c, nil
	}
	var todo []int64
	for _, v := range rows {
		off := d.base + v*int64(d.rb)
		for b := t.Block(off); b <= t.Block(off+int64(d.rb)-1); b++ {
			if !t.Checked(b) {
				todo = append(todo, int64(b))
			}
		}
	}
	if len(todo) == 0 {
		return c, nil
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	size := t.Size()
	buf := make([]byte, min(len(todo), verifyChunk)*size)
	for len(todo) > 0 {
		part := todo[:min(len(todo), verifyChunk)]
		todo = todo[len(part):]
		if err := d.checkBlocks(part, buf, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// checkBlocks reads blocks (ascending, at most len(buf)/size of them) into
// buf and checks them; on a short read it checks them one by one, so that
// only the blocks past the file's new end go without a verdict.
func (d *Disk) checkBlocks(blocks []int64, buf []byte, c *diskio.Counts) error {
	t := d.sums
	size := t.Size()
	full := blocks
	if lo, hi := t.Bounds(int(blocks[len(blocks)-1])); hi-lo < int64(size) {
		full = blocks[:len(blocks)-1] // the file's short last block: read on its own
		rc, err := d.r.ReadRows(buf[:hi-lo], []int64{0}, int(hi-lo), lo)
		c.Add(rc)
		if err := d.blockVerdict(int(blocks[len(blocks)-1]), buf[:hi-lo], err); err != nil {
			return err
		}
	}
	if len(full) == 0 {
		return nil
	}
	rc, err := d.r.ReadRows(buf[:len(full)*size], full, size, 0)
	c.Add(rc)
	var short *diskio.ShortReadError
	if errors.As(err, &short) && len(full) > 1 {
		for _, b := range full {
			if err := d.checkBlocks([]int64{b}, buf[:size], c); err != nil {
				return err
			}
		}
		return nil
	}
	for k, b := range full {
		if err := d.blockVerdict(int(b), buf[k*size:(k+1)*size], err); err != nil {
			return err
		}
	}
	return nil
}

// blockVerdict checks block b, read into block with error err: a short
// read gives no verdict (nil), another error is returned.
func (d *Disk) blockVerdict(b int, block []byte, err error) error {
	var short *diskio.ShortReadError
	switch {
	case errors.As(err, &short):
		return nil
	case err != nil:
		return err
	}
	return d.sums.Check(b, block)
}

// Close closes the file and drops the cache.
func (d *Disk) Close() error { return errors.Join(d.r.Close(), d.cache.Close()) }
