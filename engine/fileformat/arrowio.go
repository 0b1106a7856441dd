package fileformat

import (
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/array"
	"github.com/apache/arrow/go/v14/arrow/bitutil"
	"github.com/apache/arrow/go/v14/arrow/ipc"
	"github.com/apache/arrow/go/v14/arrow/memory"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// RecordBatchRows is the number of rows per record batch in the files we write
// (a variable so that tests can make it small).
var RecordBatchRows int64 = 1 << 20

// ReadIPCFile memory-maps an Arrow IPC file and reads all its record batches
// (in parallel; compressed or not). The records own their memory (the reader
// copies out of the mapping, which is released before returning); the caller
// releases them. A malformed file is an error, never a panic.
//
// When verify is not nil (a dataset file whose size and CRC-32C
// graphferry.json records: verify compares them) it is given the whole file
// first, which costs about a read of the file and catches any byte changed
// since the sum was recorded. Every ZSTD frame is then decoded a second
// time to check its own checksum, and validity bitmaps are checked
// (checkBodies, about a fifth more than the read itself), with or without
// verify: a sum recorded after the damage (a copy made by a tool that
// re-sums what it writes) certifies nothing about the frames.
func ReadIPCFile(path string, verify func(file []byte) error) (recs []arrow.Record, err error) {
	return ReadIPCFileContext(nil, path, verify)
}

// ReadIPCFileContext is ReadIPCFile stopped early, with ctx's error, when
// ctx (nil: never) is done: checked before each record batch is decoded.
func ReadIPCFileContext(ctx context.Context, path string, verify func(file []byte) error) (recs []arrow.Record, err error) {
	f, err := openIPC(ctx, path, verify)
	if err != nil {
		return nil, err
	}
	defer f.close()
	n := len(f.rows)
	recs = make([]arrow.Record, n)
	errs := make([]error, n)
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= n {
					return
				}
				if recs[j], errs[j] = f.record(j); errs[j] != nil {
					errs[j] = fmt.Errorf("dataset: %s: %w", path, errs[j])
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			ReleaseAll(recs)
			return nil, e
		}
	}
	return recs, nil
}

// ipcFile is an Arrow IPC file mapped, checked (openIPC) and open for
// decoding its record batches one at a time (record).
type ipcFile struct {
	ctx     context.Context
	path    string
	r       *ipc.FileReader
	rows    []int64 // each record batch's row count
	release func() error
}

// openIPC maps the Arrow IPC file at path and checks it as ReadIPCFile
// says (verify, the footer, every batch's body) without decoding a batch.
// The caller closes it.
func openIPC(ctx context.Context, path string, verify func(file []byte) error) (*ipcFile, error) {
	data, release, err := fileio.MapFile(path)
	if err != nil {
		return nil, err
	}
	f := &ipcFile{ctx: ctx, path: path, release: release}
	if err := f.check(data, verify); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *ipcFile) check(data []byte, verify func(file []byte) error) error {
	if verify != nil {
		if err := verify(data); err != nil {
			return err
		}
	}
	var n int
	err := CatchPanic(func() error { // reads the mapping: a fault is an error
		var err error
		if n, err = checkArrowFooter(data); err == nil {
			f.rows, err = batchRows(data)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", f.path, err)
	}
	// Refuse any single buffer over max(1 GiB, 1024 x file size): more than
	// a sane decompression ratio, far less than a corrupted length.
	alloc := cappedAllocator{inner: &recycler{free: map[int][][]byte{}}, limit: max(1<<30, 1024*len(data))}
	err = CatchPanic(func() error {
		var err error
		f.r, err = ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(alloc))
		return err
	})
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", f.path, err)
	}
	if f.r.NumRecords() != n || len(f.rows) != n {
		return fmt.Errorf("dataset: %s: footer lists %d record batches, reader sees %d", f.path, n, f.r.NumRecords())
	}
	if err := CatchPanic(func() error { return checkBodies(data, f.r.Schema(), alloc.limit) }); err != nil {
		return fmt.Errorf("dataset: %s: %w", f.path, err)
	}
	return nil
}

// record decodes record batch j (the caller releases it); the context done
// stops it with its error. Errors name the batch, not the file.
func (f *ipcFile) record(j int) (rec arrow.Record, err error) {
	if f.ctx != nil && f.ctx.Err() != nil {
		return nil, f.ctx.Err()
	}
	err = CatchPanic(func() error {
		var err error
		rec, err = f.r.RecordAt(j)
		return err
	})
	if err == nil && rec.NumRows() != f.rows[j] {
		rec.Release()
		err = fmt.Errorf("%d rows, its message says %d", rec.NumRows(), f.rows[j])
	}
	if err != nil {
		return nil, fmt.Errorf("record batch %d: %w", j, err)
	}
	return rec, nil
}

// recycler is a memory.Allocator that keeps the large buffers freed to it
// for reuse: a file's record batches, decoded and released one after
// another, take about the same sizes, so that reading them holds about a
// batch per thread rather than every batch's garbage until the collector
// runs. Large buffers are rounded up to whole MiB (the classes they are
// kept by); small ones are left to the collector.
type recycler struct {
	mu   sync.Mutex
	free map[int][][]byte // by capacity
}

const recycleUnit = 1 << 20

// Allocate implements memory.Allocator.
func (r *recycler) Allocate(size int) []byte {
	if size < recycleUnit/16 {
		return make([]byte, size)
	}
	class := (size + recycleUnit - 1) / recycleUnit * recycleUnit
	r.mu.Lock()
	l := r.free[class]
	if len(l) == 0 {
		r.mu.Unlock()
		return make([]byte, size, class)
	}
	b := l[len(l)-1]
	r.free[class] = l[:len(l)-1]
	r.mu.Unlock()
	b = b[:size]
	clear(b)
	return b
}

// Reallocate implements memory.Allocator.
func (r *recycler) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	out := r.Allocate(size)
	copy(out, b)
	r.Free(b)
	return out
}

// Free implements memory.Allocator.
func (r *recycler) Free(b []byte) {
	if cap(b) < recycleUnit || cap(b)%recycleUnit != 0 {
		return
	}
	r.mu.Lock()
	r.free[cap(b)] = append(r.free[cap(b)], b[:0])
	r.mu.Unlock()
}

// close closes the reader and unmaps the file.
func (f *ipcFile) close() {
	if f.r != nil {
		f.r.Close()
	}
	f.release()
}

// CatchPanic runs fn and turns a panic (the Arrow reader panics on some
// malformed inputs) into an error, and a memory fault (the mapped file
// truncated meanwhile) into an error wrapping errs.ErrIO.
func CatchPanic(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed Arrow IPC data: %v", r)
		}
	}()
	if ferr := feature.Guard(func() { err = fn() }); ferr != nil {
		return ferr
	}
	return err
}

// ReleaseAll releases every non-nil record.
func ReleaseAll(recs []arrow.Record) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}

// WriteIPCFile writes the record batches produced by batch(lo, hi) for rows
// [0, n) in chunks of RecordBatchRows to path as a ZSTD-compressed Arrow IPC file.
// It writes to a temporary file and renames it into place.
func WriteIPCFile(path string, schema *arrow.Schema, n int64, batch func(lo, hi int64) ([]arrow.Array, error)) (err error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithZstd(),
		ipc.WithCompressConcurrency(runtime.GOMAXPROCS(0)), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	// One batch per RecordBatchRows rows; an empty table gets one empty batch.
	for lo := int64(0); ; {
		hi := min(lo+RecordBatchRows, n)
		cols, err := batch(lo, hi)
		if err != nil {
			return err
		}
		rec := array.NewRecord(schema, cols, hi-lo)
		for _, c := range cols {
			c.Release()
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("dataset: writing %s: %w", path, err)
		}
		if lo = hi; lo >= n {
			break
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("dataset: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// ArrowType returns the Arrow type that stores elements of d.
func ArrowType(d mem.DType) (arrow.DataType, error) {
	switch d {
	case mem.Float32:
		return arrow.PrimitiveTypes.Float32, nil
	case mem.Float16:
		return arrow.FixedWidthTypes.Float16, nil
	case mem.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	case mem.Int64:
		return arrow.PrimitiveTypes.Int64, nil
	case mem.Int32:
		return arrow.PrimitiveTypes.Int32, nil
	case mem.Int8:
		return arrow.PrimitiveTypes.Int8, nil
	case mem.Uint8:
		return arrow.PrimitiveTypes.Uint8, nil
	case mem.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	}
	return nil, fmt.Errorf("dtype %v has no Arrow equivalent", d)
}

// memType returns the dtype of an Arrow fixed-width type, or false.
func memType(t arrow.DataType) (mem.DType, bool) {
	switch t.ID() {
	case arrow.FLOAT32:
		return mem.Float32, true
	case arrow.FLOAT16:
		return mem.Float16, true
	case arrow.FLOAT64:
		return mem.Float64, true
	case arrow.INT64:
		return mem.Int64, true
	case arrow.INT32:
		return mem.Int32, true
	case arrow.INT8:
		return mem.Int8, true
	case arrow.UINT8:
		return mem.Uint8, true
	case arrow.BOOL:
		return mem.Bool, true
	}
	return mem.Invalid, false
}

// primitiveArray builds an Arrow array of n elements of type d from raw
// little-endian bytes (zero-copy except for Bool, which Arrow bit-packs).
func primitiveArray(d mem.DType, n int64, raw []byte) (arrow.Array, error) {
	t, err := ArrowType(d)
	if err != nil {
		return nil, err
	}
	if d == mem.Bool {
		bits := make([]byte, bitutil.BytesForBits(n))
		for i, b := range raw[:n] {
			if b != 0 {
				bitutil.SetBit(bits, i)
			}
		}
		raw = bits
	}
	data := array.NewData(t, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// TensorColumn builds the Arrow array of rows [lo, hi) of a 1-D or 2-D
// tensor: a primitive array, or a fixed-size list per row for 2-D.
func TensorColumn(t mem.Tensor, lo, hi int64) (arrow.Array, error) {
	rb := int64(t.RowBytes())
	raw := t.Data[lo*rb : hi*rb]
	if len(t.Shape) == 1 {
		return primitiveArray(t.DType, hi-lo, raw)
	}
	k := t.Shape[1]
	child, err := primitiveArray(t.DType, (hi-lo)*k, raw)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	lt := arrow.FixedSizeListOf(int32(k), child.DataType())
	data := array.NewData(lt, int(hi-lo), []*memory.Buffer{nil}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// ColumnTensor concatenates one column (index col) of recs into a tensor on
// the Go heap. Primitive fixed-width columns give a 1-D tensor, fixed-size
// lists of them a 2-D one. ok is false for other types. Nulls are an error.
func ColumnTensor(recs []arrow.Record, col int, name string) (t mem.Tensor, ok bool, err error) {
	if len(recs) == 0 {
		return t, false, nil
	}
	typ := recs[0].Schema().Field(col).Type
	width := int64(1)
	elem := typ
	if fl, isList := typ.(*arrow.FixedSizeListType); isList {
		width, elem = int64(fl.Len()), fl.Elem()
	}
	dt, ok := memType(elem)
	if !ok {
		return t, false, nil
	}
	// First check every batch against its buffers, then allocate: the
	// sizes in the metadata (a list width, a row count) are not trusted
	// before the data is seen to back them.
	type part struct {
		src      []byte
		start, n int64
	}
	parts := make([]part, len(recs))
	size := int64(dt.Size())
	var rows int64
	for bi, r := range recs {
		a := r.Column(col)
		if !arrow.TypeEqual(a.DataType(), typ) {
			return t, false, fmt.Errorf("column %q has type %v in record batch %d but %v in batch 0", name, a.DataType(), bi, typ)
		}
		if a.NullN() > 0 {
			return t, false, fmt.Errorf("column %q has %d nulls in record batch %d", name, a.NullN(), bi)
		}
		n := int64(a.Len())
		vals, start := a, int64(a.Data().Offset())
		if l, isList := a.(*array.FixedSizeList); isList {
			vals = l.ListValues()
			if vals.NullN() > 0 {
				return t, false, fmt.Errorf("column %q has null list elements in record batch %d", name, bi)
			}
			start = start*width + int64(vals.Data().Offset())
		}
		src := valueBytes(vals.Data())
		// Elements needed: (start + n*width), in bits for Bool.
		hi, need := bits.Mul64(uint64(n), uint64(width))
		need += uint64(max(start, 0))
		have := uint64(len(src)) / uint64(size)
		if dt == mem.Bool {
			have = uint64(len(src)) * 8
		}
		if start < 0 || n < 0 || hi != 0 || need > have {
			return t, false, fmt.Errorf("column %q: record batch %d has %d rows of width %d, but its value buffer holds %d elements",
				name, bi, n, width, have)
		}
		parts[bi] = part{src: src, start: start, n: n}
		rows += n
	}
	t = mem.Tensor{DType: dt, Shape: []int64{rows}}
	if typ.ID() == arrow.FIXED_SIZE_LIST {
		t.Shape = append(t.Shape, width)
	}
	total, err := fileio.TensorBytes(t)
	if err != nil {
		return t, false, fmt.Errorf("column %q %w", name, err)
	}
	if t.Data, err = (mem.Heap{}).Alloc(int(total)); err != nil { // 8-byte aligned
		return t, false, fmt.Errorf("column %q: %w (%w)", name, err, errs.ErrNoMem)
	}
	var row int64
	for _, p := range parts {
		dst := t.Data[row*width*size : (row+p.n)*width*size]
		if dt == mem.Bool {
			for i := range dst {
				if bitutil.BitIsSet(p.src, int(p.start)+i) {
					dst[i] = 1
				}
			}
		} else {
			copy(dst, p.src[p.start*size:(p.start+p.n*width)*size])
		}
		row += p.n
	}
	return t, true, nil
}

// valueBytes returns the value buffer (buffer 1) of fixed-width array data,
// or nil if there is none.
func valueBytes(d arrow.ArrayData) []byte {
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	return bufs[1].Bytes()
}
