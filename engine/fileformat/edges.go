package fileformat

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/array"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// Edge table column names.
const (
	colSrc    = "src"
	colDst    = "dst"
	colWeight = "weight"
)

// ReadEdgeTable reads an edge table (Arrow IPC file with columns src, dst
// and optionally weight; see EdgesFromRecords) and builds its CSC as
// graph.FromCOO does: the edge id of an edge is its row position in the
// file.
func ReadEdgeTable(path string, opt graph.COOOptions) (*graph.CSC, error) {
	return ReadEdgeTableVerified(path, opt, nil)
}

// ReadEdgeTableVerified is ReadEdgeTable for a file whose size and checksum
// are recorded: verify, when not nil, checks the whole file first (see
// ReadIPCFile).
func ReadEdgeTableVerified(path string, opt graph.COOOptions, verify func(file []byte) error) (*graph.CSC, error) {
	return ReadEdgeTableVerifiedContext(nil, path, opt, verify)
}

// ReadEdgeTableVerifiedContext is ReadEdgeTableVerified stopped early, with
// ctx's error, when ctx (nil: never) is done: checked before each record
// batch is decoded.
func ReadEdgeTableVerifiedContext(ctx context.Context, path string, opt graph.COOOptions, verify func(file []byte) error) (*graph.CSC, error) {
	return ReadEdgeTableReserved(ctx, path, opt, verify, nil)
}

// ReadEdgeTableReserved is ReadEdgeTableVerifiedContext with reserve.
//
// The table is never held whole: the CSC is built with graph.BuildCOO from
// the record batches decoded one at a time per thread (each read two or
// three times), so that the build holds the CSC, its counters and a record
// batch per thread. reserve (nil: none) is told the bytes of the counters,
// then of the counters and the CSC, before each is allocated (after the
// machine's memory was checked), and an error it returns stops the read.
func ReadEdgeTableReserved(ctx context.Context, path string, opt graph.COOOptions, verify func(file []byte) error, reserve func(bytes int64) error) (*graph.CSC, error) {
	f, err := openIPC(ctx, path, verify)
	if err != nil {
		return nil, err
	}
	defer f.close()
	schema := f.r.Schema()
	if schema.HasMetadata() && schema.Metadata().FindKey(TypesMetaKey) >= 0 {
		// Its ids are type-local: read as one edge list they would be wrong.
		return nil, fmt.Errorf("dataset: %s is a typed edge table (its schema has %q metadata): open it as one (gf_graph_open_typed_arrow)", path, TypesMetaKey)
	}
	src := &recordEdges{rows: f.rows, weighted: len(schema.FieldIndices(colWeight)) > 0, record: f.record}
	if reserve != nil {
		// Decoding holds, per thread, a batch's columns and compressed
		// body, the body check's buffer and what the batches decoded
		// between collections left: about four decoded batches (measured
		// on products-like: 3.5).
		var most int64
		for _, n := range f.rows {
			most = max(most, n)
		}
		decode := int64(min(runtime.GOMAXPROCS(0), len(f.rows))) * 4 * most * 8 * int64(schema.NumFields())
		inner := reserve
		reserve = func(bytes int64) error { return inner(bytes + decode) }
	}
	g, err := buildEdges(src, opt, reserve)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return g, nil
}

// EdgesFromRecords builds a CSC from edge records (edge id = row position
// across the records in order). Columns are found by name: src and dst
// (int64 or int32, no nulls) and an optional weight (float32 or float64,
// no nulls). The records are not released.
func EdgesFromRecords(recs []arrow.Record, opt graph.COOOptions) (*graph.CSC, error) {
	src := &recordEdges{rows: make([]int64, len(recs)), record: func(i int) (arrow.Record, error) {
		recs[i].Retain() // Load releases it
		return recs[i], nil
	}}
	for i, r := range recs {
		if r == nil {
			return nil, fmt.Errorf("dataset: record batch %d is nil", i)
		}
		src.rows[i] = r.NumRows()
	}
	src.weighted = len(recs) > 0 && len(recs[0].Schema().FieldIndices(colWeight)) > 0
	g, err := buildEdges(src, opt, nil)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return g, nil
}

// buildEdges builds the CSC of src with graph.BuildCOO, checking before
// each allocation that it fits in the machine's memory, then reserve.
func buildEdges(src *recordEdges, opt graph.COOOptions, reserve func(bytes int64) error) (*graph.CSC, error) {
	return graph.BuildCOO(src, opt, func(n, e, bytes int64) error {
		what := fmt.Sprintf("a graph of %d nodes and %d edges", n, e)
		if opt.NumNodes <= 0 {
			what = fmt.Sprintf("a graph of %d nodes (largest id %d) and %d edges", n, n-1, e)
		}
		if err := fileio.CheckAlloc(uint64(bytes), what); err != nil {
			return err
		}
		if reserve != nil {
			return reserve(bytes)
		}
		return nil
	})
}

// recordEdges are the record batches of an edge table as graph.EdgeBatches:
// each one got from record when loaded (decoded from a file, or held in
// memory), its columns checked (edgeBatch.load), int32 ids and float64
// weights widened, and released after use.
type recordEdges struct {
	rows     []int64
	weighted bool
	record   func(i int) (arrow.Record, error)
	first    []int64 // first[i]: the row of batch i's first edge
	once     sync.Once
	loaded   atomic.Int64
}

// gcEvery is how many batches recordEdges loads between collections.
const gcEvery = 8

func (s *recordEdges) NumBatches() int { return len(s.rows) }

func (s *recordEdges) BatchRows(i int) int64 { return s.rows[i] }

func (s *recordEdges) Weighted() bool { return s.weighted }

func (s *recordEdges) Load(i int, fn func(graph.EdgePiece) error) error {
	s.once.Do(func() {
		s.first = make([]int64, len(s.rows))
		for j := 1; j < len(s.rows); j++ {
			s.first[j] = s.first[j-1] + s.rows[j-1]
		}
	})
	// Decoding a batch leaves garbage the recycler does not see (Arrow's
	// ZSTD decoder, made per batch): collected every few batches, so that
	// the read holds about the CSC, not the CSC and as much garbage again
	// (the collector's default goal).
	if s.loaded.Add(1)%gcEvery == 0 {
		runtime.GC()
	}
	r, err := s.record(i)
	if err != nil {
		return err
	}
	defer r.Release()
	var b edgeBatch
	if err := CatchPanic(func() error { return b.load(r, i, s.first[i]) }); err != nil {
		return err
	}
	if b.hasWeight != s.weighted {
		return fmt.Errorf("column %q is in some record batches but not in others (batch %d)", colWeight, i)
	}
	p := graph.EdgePiece{Src: b.src64, Dst: b.dst64, Weights: b.weight32}
	if p.Src == nil {
		p.Src = widen(b.src32)
	}
	if p.Dst == nil {
		p.Dst = widen(b.dst32)
	}
	if b.weight64 != nil {
		p.Weights = make([]float32, len(b.weight64))
		for j, x := range b.weight64 {
			p.Weights[j] = float32(x)
		}
	}
	return fn(p)
}

// widen returns v as int64s.
func widen(v []int32) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// edgeBatch holds the typed columns of one record batch and where its rows
// go in the concatenated arrays.
type edgeBatch struct {
	row          int64
	src64, dst64 []int64
	src32, dst32 []int32
	weight32     []float32
	weight64     []float64
	hasWeight    bool
}

// gatherEdges checks the edge columns of every record and concatenates them
// into src, dst and (if present) weight arrays.
func gatherEdges(recs []arrow.Record) (src, dst []int64, w []float32, err error) {
	batches := make([]edgeBatch, len(recs))
	var rows int64
	for bi, r := range recs {
		b := &batches[bi]
		b.row = rows
		if r == nil {
			return nil, nil, nil, fmt.Errorf("record batch %d is nil", bi)
		}
		if err := CatchPanic(func() error { return b.load(r, bi, rows) }); err != nil {
			return nil, nil, nil, err
		}
		if bi > 0 && b.hasWeight != batches[0].hasWeight {
			return nil, nil, nil, fmt.Errorf("column %q is in some record batches but not in others (batch %d)", colWeight, bi)
		}
		rows += r.NumRows()
	}
	src, dst = make([]int64, rows), make([]int64, rows)
	if len(batches) > 0 && batches[0].hasWeight {
		w = make([]float32, rows)
	}
	var wg sync.WaitGroup
	work := make(chan *edgeBatch, len(batches))
	for i := range batches {
		work <- &batches[i]
	}
	close(work)
	for range min(runtime.GOMAXPROCS(0), len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.copyTo(src, dst, w)
			}
		}()
	}
	wg.Wait()
	return src, dst, w, nil
}

// load finds and type-checks the columns of record r (batch bi, whose first
// row has global index row0).
func (b *edgeBatch) load(r arrow.Record, bi int, row0 int64) error {
	col := func(name string, required bool) (arrow.Array, error) {
		idx := r.Schema().FieldIndices(name)
		if len(idx) == 0 {
			if required {
				return nil, fmt.Errorf("edge table has no column %q (record batch %d has %v)", name, bi, fieldNames(r.Schema()))
			}
			return nil, nil
		}
		if len(idx) > 1 {
			return nil, fmt.Errorf("edge table has %d columns named %q", len(idx), name)
		}
		a := r.Column(idx[0])
		if a.NullN() > 0 {
			for i := range a.Len() {
				if a.IsNull(i) {
					return nil, fmt.Errorf("column %q has a null at row %d (nulls are not allowed)", name, row0+int64(i))
				}
			}
		}
		return a, nil
	}
	for _, name := range []string{colSrc, colDst} {
		a, err := col(name, true)
		if err != nil {
			return err
		}
		var v64 []int64
		var v32 []int32
		switch a := a.(type) {
		case *array.Int64:
			v64 = a.Int64Values()
		case *array.Int32:
			v32 = a.Int32Values()
		default:
			return fmt.Errorf("column %q has type %v, want int64 or int32", name, a.DataType())
		}
		if name == colSrc {
			b.src64, b.src32 = v64, v32
		} else {
			b.dst64, b.dst32 = v64, v32
		}
	}
	a, err := col(colWeight, false)
	if err != nil {
		return err
	}
	if a != nil {
		b.hasWeight = true
		switch a := a.(type) {
		case *array.Float32:
			b.weight32 = a.Float32Values()
		case *array.Float64:
			b.weight64 = a.Float64Values()
		default:
			return fmt.Errorf("column %q has type %v, want float32 or float64", colWeight, a.DataType())
		}
	}
	n := r.NumRows()
	for _, l := range []int{len(b.src64) + len(b.src32), len(b.dst64) + len(b.dst32)} {
		if int64(l) != n {
			return fmt.Errorf("record batch %d has %d rows but a column of length %d", bi, n, l)
		}
	}
	if b.hasWeight && int64(len(b.weight32)+len(b.weight64)) != n {
		return fmt.Errorf("record batch %d has %d rows but column %q has length %d", bi, n, colWeight, len(b.weight32)+len(b.weight64))
	}
	return nil
}

// copyTo writes the batch's edges into the concatenated arrays.
func (b *edgeBatch) copyTo(src, dst []int64, w []float32) {
	widen := func(out []int64, v64 []int64, v32 []int32) {
		if v64 != nil {
			copy(out, v64)
			return
		}
		for i, x := range v32 {
			out[i] = int64(x)
		}
	}
	n := int64(max(len(b.src64), len(b.src32)))
	widen(src[b.row:b.row+n], b.src64, b.src32)
	widen(dst[b.row:b.row+n], b.dst64, b.dst32)
	if w != nil {
		if b.weight32 != nil {
			copy(w[b.row:b.row+n], b.weight32)
		} else {
			for i, x := range b.weight64 {
				w[b.row+int64(i)] = float32(x)
			}
		}
	}
}

// fieldNames lists the column names of a schema.
func fieldNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i := range names {
		names[i] = s.Field(i).Name
	}
	return names
}

// edgeSchema is the schema of the edge tables we write.
func edgeSchema(weighted bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: colSrc, Type: arrow.PrimitiveTypes.Int64},
		{Name: colDst, Type: arrow.PrimitiveTypes.Int64},
	}
	if weighted {
		fields = append(fields, arrow.Field{Name: colWeight, Type: arrow.PrimitiveTypes.Float32})
	}
	return arrow.NewSchema(fields, nil)
}

// WriteEdgeTable writes the edges src[i] -> dst[i] (with weight[i] when
// weight is not nil) to path as a ZSTD-compressed Arrow IPC file in batches
// of about a million rows.
func WriteEdgeTable(path string, src, dst []int64, weight []float32) error {
	return WriteEdgeTableContext(nil, path, src, dst, weight)
}

// WriteEdgeTableContext is WriteEdgeTable stopped early, with ctx's error,
// when ctx (nil: never) is done: checked before each record batch.
func WriteEdgeTableContext(ctx context.Context, path string, src, dst []int64, weight []float32) error {
	if len(src) != len(dst) {
		return fmt.Errorf("dataset: len(src)=%d does not equal len(dst)=%d", len(src), len(dst))
	}
	if weight != nil && len(weight) != len(src) {
		return fmt.Errorf("dataset: len(weight)=%d does not equal len(src)=%d", len(weight), len(src))
	}
	schema := edgeSchema(weight != nil)
	return WriteIPCFile(path, schema, int64(len(src)), func(lo, hi int64) ([]arrow.Array, error) {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s, _ := primitiveArray(mem.Int64, hi-lo, mem.Bytes(src[lo:hi]))
		d, _ := primitiveArray(mem.Int64, hi-lo, mem.Bytes(dst[lo:hi]))
		cols := []arrow.Array{s, d}
		if weight != nil {
			wc, _ := primitiveArray(mem.Float32, hi-lo, mem.Bytes(weight[lo:hi]))
			cols = append(cols, wc)
		}
		return cols, nil
	})
}
