//go:build gftest

package main

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/array"
	"github.com/apache/arrow/go/v14/arrow/cdata"
	"github.com/apache/arrow/go/v14/arrow/memory"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkSampledEdges checks that every edge of blocks (per hop: indptr,
// indices into nodes, edge ids) is an edge of the CSC (indptr, indices)
// with that id.
func checkSampledEdges(t *testing.T, indptr, indices []int64, nodes []int64, blocks [][3][]int64) {
	t.Helper()
	for h, b := range blocks {
		ip, ix, eid := b[0], b[1], b[2]
		require.Equal(t, len(ix), len(eid), "hop %d", h)
		for d := 0; d+1 < len(ip); d++ {
			v := nodes[d]
			for k := ip[d]; k < ip[d+1]; k++ {
				require.Less(t, ix[k], int64(len(nodes)))
				u := nodes[ix[k]]
				e := eid[k]
				require.True(t, e >= indptr[v] && e < indptr[v+1] && indices[e] == u,
					"hop %d: edge %d -> %d with id %d is not in the graph", h, u, v, e)
			}
		}
	}
}

func TestGraphFromCSCAndSample(t *testing.T) {
	indptr := []int64{0, 2, 5, 6, 8, 8, 10}
	indices := []int64{1, 2, 0, 3, 4, 0, 1, 5, 2, 3}
	for _, bits := range []uint8{64, 32} {
		g, rc := testGraphFromCSC(indptr, indices, bits)
		require.Equal(t, gfOK, rc, lastError())
		n, rc := testGraphNumNodes(g)
		require.Equal(t, gfOK, rc)
		assert.Equal(t, int64(6), n)
		nodes, blocks, rc := testSample(g, []int64{3, 0}, []int32{2, 2}, false, 1)
		require.Equal(t, gfOK, rc, lastError())
		assert.Equal(t, []int64{3, 0}, nodes[:2])
		checkSampledEdges(t, indptr, indices, nodes, blocks)
		testGraphClose(g)
		_, rc = testGraphNumNodes(g)
		assert.Equal(t, gfEBadHandle, rc)
		assert.Contains(t, lastError(), "already closed")
	}
	assert.Equal(t, 0, liveHandles())
}

func TestBadInputLeavesGraphUsable(t *testing.T) {
	indptr := []int64{0, 1, 2, 3}
	indices := []int64{1, 2, 0}
	g, rc := testGraphFromCSC(indptr, indices, 64)
	require.Equal(t, gfOK, rc)
	defer testGraphClose(g)

	_, _, rc = testSample(g, []int64{0, 7}, []int32{1}, false, 0)
	assert.Equal(t, gfEInval, rc)
	assert.Contains(t, lastError(), "gf_sample: seeds")
	assert.Contains(t, lastError(), "7")

	_, _, rc = testSample(g, []int64{0}, nil, false, 0)
	assert.Equal(t, gfEInval, rc)
	assert.Contains(t, lastError(), "num_hops")

	_, _, rc = testSample(g, []int64{0}, []int32{-2}, false, 0)
	assert.Equal(t, gfEInval, rc)
	assert.Contains(t, lastError(), "-2")

	_, _, rc = testSample(g+1, []int64{0}, []int32{1}, false, 0)
	assert.Equal(t, gfEBadHandle, rc)

	nodes, blocks, rc := testSample(g, []int64{0, 1}, []int32{1, 1}, false, 0)
	require.Equal(t, gfOK, rc, lastError())
	checkSampledEdges(t, indptr, indices, nodes, blocks)

	_, rc = testGraphFromCSC([]int64{0, 2, 1, 3}, []int64{0, 1, 2}, 64)
	assert.Equal(t, gfEInval, rc)
	assert.Contains(t, lastError(), "gf_graph_from_csc")
}

// FuzzGraphFromCSC throws arbitrary arrays at gf_graph_from_csc and
// gf_sample: every call must return a status (never crash), and whatever is
// accepted must sample only edges of the graph.
func FuzzGraphFromCSC(f *testing.F) {
	f.Add([]byte{0, 2, 3, 3}, []byte{1, 2, 0}, []byte{0, 1}, int8(2), int8(-1))
	f.Add([]byte{0, 5, 1}, []byte{9}, []byte{3}, int8(0), int8(1))
	f.Fuzz(func(t *testing.T, ip, ix, seeds []byte, f1, f2 int8) {
		if len(ip) > 64 || len(ix) > 256 || len(seeds) > 16 {
			return
		}
		conv := func(b []byte) []int64 {
			out := make([]int64, len(b))
			for i, v := range b {
				out[i] = int64(int8(v))
			}
			return out
		}
		indptr, indices := conv(ip), conv(ix)
		g, rc := testGraphFromCSC(indptr, indices, 64)
		if rc != gfOK {
			require.NotEmpty(t, lastError())
			return
		}
		defer testGraphClose(g)
		nodes, blocks, rc := testSample(g, conv(seeds), []int32{int32(f1), int32(f2)}, f1%2 == 0, 3)
		if rc != gfOK {
			require.NotEmpty(t, lastError())
			return
		}
		checkSampledEdges(t, indptr, indices, nodes, blocks)
	})
}

// A rejected Arrow table is left to the caller untouched (still importable,
// data intact); an accepted one is released by graphferry.
func TestGraphFromArrowLosesNothing(t *testing.T) {
	build := func(names ...string) arrow.Record {
		fields := make([]arrow.Field, len(names))
		cols := make([]arrow.Array, len(names))
		for i, n := range names {
			fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64}
			b := array.NewInt64Builder(memory.DefaultAllocator)
			b.AppendValues([]int64{0, 1, 2}, nil)
			cols[i] = b.NewArray()
		}
		return array.NewRecord(arrow.NewSchema(fields, nil), cols, 3)
	}
	schema, arr, free := testArrowStructs()
	defer free()

	bad := build("src", "target")
	cdata.ExportArrowRecordBatch(bad, (*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(schema))
	_, rc, released := testGraphFromArrow(schema, arr)
	assert.Equal(t, gfEInval, rc)
	assert.Contains(t, lastError(), `no column "dst"`)
	require.False(t, released, "a rejected table must be left to the caller")
	back, err := cdata.ImportCRecordBatch((*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(schema))
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2}, back.Column(1).(*array.Int64).Int64Values())
	back.Release()

	good := build("src", "dst")
	cdata.ExportArrowRecordBatch(good, (*cdata.CArrowArray)(arr), (*cdata.CArrowSchema)(schema))
	g, rc, released := testGraphFromArrow(schema, arr)
	require.Equal(t, gfOK, rc, lastError())
	assert.True(t, released, "an accepted table is released by graphferry")
	n, _ := testGraphNumNodes(g)
	assert.Equal(t, int64(3), n)
	testGraphClose(g)
}

// The buffers of exported tensors: aligned, writable to their last byte,
// large ones reused while a loader (a pool user) is open and released when
// the last one goes; small ones never pooled.
func TestBufferPool(t *testing.T) {
	_, _, users := testPoolStats()
	require.Zero(t, users, "no loader may be open here")

	write := func(p unsafe.Pointer, n int) {
		b := unsafe.Slice((*byte)(p), n)
		b[0], b[n-1] = 1, 2
	}
	// Without users nothing is kept.
	for _, n := range []int{1, 100, 1 << 20, 3<<20 + 5} {
		p := testBufAlloc(n)
		require.NotNil(t, p)
		require.Zero(t, uintptr(p)%64, "n=%d: 64-byte aligned", n)
		write(p, n)
		testBufFree(p)
	}
	count, _, _ := testPoolStats()
	require.Zero(t, count)

	testPoolUse(1)
	const big = 5<<20 + 4096 // size class 6 MiB
	p := testBufAlloc(big)
	write(p, big)
	testBufFree(p)
	count, bytes, users := testPoolStats()
	require.Equal(t, [3]int64{1, bytes, 1}, [3]int64{count, bytes, users})
	require.GreaterOrEqual(t, bytes, int64(big))
	// A slightly larger request fits the pooled buffer (size classes); one
	// much smaller does not take it.
	small := testBufAlloc(big / 4)
	require.NotEqual(t, p, small)
	q := testBufAlloc(big + big/20)
	require.Equal(t, p, q, "the pooled buffer is reused")
	write(q, big+big/20)
	count, _, _ = testPoolStats()
	require.Zero(t, count)
	testBufFree(q)
	testBufFree(small)
	count, _, _ = testPoolStats()
	require.Equal(t, int64(2), count)
	// Tiny buffers are never pooled.
	tiny := testBufAlloc(64)
	testBufFree(tiny)
	count, _, _ = testPoolStats()
	require.Equal(t, int64(2), count)
	// The pool is bounded: freeing more than it holds releases the rest.
	var ps []unsafe.Pointer
	for range 40 {
		ps = append(ps, testBufAlloc(20<<20))
	}
	for _, p := range ps {
		testBufFree(p)
	}
	count, bytes, _ = testPoolStats()
	require.LessOrEqual(t, count, int64(32))
	require.LessOrEqual(t, bytes, int64(512<<20))
	testPoolUse(-1)
	count, bytes, users = testPoolStats()
	require.Equal(t, [3]int64{0, 0, 0}, [3]int64{count, bytes, users})
}

// Engine errors reach C with the status code of their class; the message is
// the engine's.
func TestEngineErrCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{core.ErrGraphClosed, gfEBadHandle},
		{fmt.Errorf("loading: %w", errs.ErrIO), gfEIO},
		{errs.ErrNoMem, gfENoMem},
		{core.ErrNotStarted, gfEState},
		{fmt.Errorf("x: %w", errs.ErrType), gfEType},
		{errs.ErrNotSupported, gfENotSup},
		{errors.New("seeds[0] = 9 is out of range"), gfEInval},
		{errorf(gfEType, "typed"), gfEType},
	} {
		assert.Equal(t, c.code, int(statusOf(c.err)), "%v", c.err)
	}
}
