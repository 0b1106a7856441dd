package fileformat

import (
	"context"
	"fmt"
	"runtime"
	"sync"

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
// and optionally weight; see EdgesFromRecords) and builds its CSC with
// graph.FromCOO: the edge id of an edge is its row position in the file.
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
// batch is decoded and before the graph is built.
func ReadEdgeTableVerifiedContext(ctx context.Context, path string, opt graph.COOOptions, verify func(file []byte) error) (*graph.CSC, error) {
	recs, err := ReadIPCFileContext(ctx, path, verify)
	if err != nil {
		return nil, err
	}
	if len(recs) > 0 && recs[0].Schema().HasMetadata() && recs[0].Schema().Metadata().FindKey(TypesMetaKey) >= 0 {
		// Its ids are type-local: read as one edge list they would be wrong.
		ReleaseAll(recs)
		return nil, fmt.Errorf("dataset: %s is a typed edge table (its schema has %q metadata): open it as one (gf_graph_open_typed_arrow)", path, TypesMetaKey)
	}
	src, dst, w, err := gatherEdges(recs)
	ReleaseAll(recs)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	if err := checkGraphAlloc(src, dst, opt); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	if ctx != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	g, err := graph.FromCOO(src, dst, w, opt)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return g, nil
}

// checkGraphAlloc checks that the CSC that graph.FromCOO would build fits in
// memory: without opt.NumNodes the node count comes from the largest id,
// and a single id of 2^32 in a small file would make it allocate tens of
// gigabytes for indptr (Go's out-of-memory error kills the process).
func checkGraphAlloc(src, dst []int64, opt graph.COOOptions) error {
	n := opt.NumNodes
	if n <= 0 {
		mx := int64(-1)
		for _, ids := range [][]int64{src, dst} {
			for _, v := range ids {
				mx = max(mx, v)
			}
		}
		if mx >= graph.MaxNodes {
			return nil // FromCOO refuses it with a better message
		}
		n = mx + 1
	}
	// What FromCOO allocates: indptr, sources, edge ids and weights.
	need := 8*uint64(n+2) + 24*uint64(len(src))
	what := fmt.Sprintf("a graph of %d nodes and %d edges", n, len(src))
	if opt.NumNodes <= 0 {
		what = fmt.Sprintf("a graph of %d nodes (largest id %d) and %d edges", n, n-1, len(src))
	}
	return fileio.CheckAlloc(need, what)
}

// EdgesFromRecords builds a CSC from edge records (edge id = row position
// across the records in order). Columns are found by name: src and dst
// (int64 or int32, no nulls) and an optional weight (float32 or float64,
// no nulls). The records are not released.
func EdgesFromRecords(recs []arrow.Record, opt graph.COOOptions) (*graph.CSC, error) {
	src, dst, w, err := gatherEdges(recs)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return graph.FromCOO(src, dst, w, opt)
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
