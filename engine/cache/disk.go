package cache

import (
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/diskio"
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
}

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
	r, err := diskio.Open(path, opt.Reader)
	if err != nil {
		return nil, err
	}
	c, err := rowcache.New(opt.CacheBytes, rb, opt.Policy)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &Disk{r: r, cache: c, path: path, base: base, rb: rb, rows: rows, n: t.Shape[0]}, nil
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
	miss := d.cache.Lookup(ids, dst, nil)
	hits := len(ids) - len(miss)
	tc.ColdRows = int64(len(ids))
	tc.CacheRows = int64(hits)
	tc.Bytes[mem.KindHost] = int64(hits) * int64(rb)
	if len(miss) == 0 {
		return tc, nil
	}
	keys := make([]int64, len(miss))
	fileRows := make([]int64, len(miss))
	for k, i := range miss {
		v := ids[i]
		if v < 0 || v >= d.n {
			return tc, fmt.Errorf("cache: ids[%d] = %d is out of range [0, %d)", i, v, d.n)
		}
		keys[k] = v
		if d.rows != nil {
			v = d.rows[v]
		}
		fileRows[k] = v
	}
	buf := dst
	if len(miss) != len(ids) {
		buf = make([]byte, len(miss)*rb)
	}
	c, err := d.r.ReadRows(buf, fileRows, rb, d.base)
	tc.DiskRequests, tc.DiskRead = c.Requests, c.Bytes
	if err != nil {
		var short *diskio.ShortReadError
		if errors.As(err, &short) {
			return tc, feature.PastEnd(short.Path, short.Offset)
		}
		return tc, err
	}
	tc.DiskRows = int64(len(miss))
	tc.DiskBytes = int64(len(miss)) * int64(rb)
	if len(miss) != len(ids) {
		for k, i := range miss {
			copy(dst[i*rb:(i+1)*rb], buf[k*rb:(k+1)*rb])
		}
	}
	d.cache.Insert(keys, buf)
	return tc, nil
}

// Close closes the file and drops the cache.
func (d *Disk) Close() error { return errors.Join(d.r.Close(), d.cache.Close()) }
