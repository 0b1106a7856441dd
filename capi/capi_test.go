//go:build gftest

package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rankpart"

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

// The fuzzers of the newer entry points that take caller structs (issue
// 34): whatever the fields, a call returns a status (with a message when
// it is an error), never crashes or hangs, and leaves its handles usable.

// fuzzDims turns fuzzed sizes into a shape of ndim entries (ndim may be
// out of range: the call must refuse it).
func fuzzDims(ndim int8, n0, n1 int16) ([]int64, int32) {
	shape := []int64{int64(n0), int64(n1)}
	if ndim >= 0 && int(ndim) <= len(shape) {
		return shape[:ndim], int32(ndim)
	}
	return nil, int32(ndim)
}

// fuzzOffset is a byte_offset of one of the kinds a caller may pass: none,
// inside the buffer, far past it (unmapped) or wrapping around.
func fuzzOffset(kind uint8, n int) uint64 {
	switch kind % 4 {
	case 1:
		return uint64(kind) % uint64(n+1)
	case 2:
		return 1 << 46
	case 3:
		return ^uint64(0) - uint64(kind)
	}
	return 0
}

func FuzzPartSetTime(f *testing.F) {
	root := f.TempDir()
	ds, err := gen.Build(gen.Presets()["tiny"])
	require.NoError(f, err)
	src := filepath.Join(root, "src")
	require.NoError(f, dataset.Write(src, ds))
	open, err := dataset.Open(src)
	require.NoError(f, err)
	_, err = rankpart.Partition(open, filepath.Join(root, "parts"), rankpart.PartitionOptions{Method: partition.Range, Parts: 2, Layout: rankpart.LayoutDSP})
	require.NoError(f, err)
	require.NoError(f, open.Close())
	p, rc := testPartOpen(filepath.Join(root, "parts"), 0)
	require.Equal(f, gfOK, rc, lastError())
	f.Cleanup(func() { testPartClose(p) })
	owned, rc := testPartOwned(p)
	require.Equal(f, gfOK, rc)

	f.Add(make([]byte, 8*1024), uint8(dlInt), uint8(64), uint8(1), int8(1), int8(1), int16(1024), int16(0), uint8(0), false, false)
	f.Add(make([]byte, 8*40000), uint8(dlInt), uint8(64), uint8(1), int8(1), int8(1), int16(30000), int16(0), uint8(0), false, true)
	f.Add([]byte{1, 2, 3}, uint8(2), uint8(32), uint8(1), int8(1), int8(2), int16(3), int16(-1), uint8(2), true, false)
	f.Add(make([]byte, 64), uint8(dlInt), uint8(64), uint8(0), int8(2), int8(1), int16(8), int16(0), uint8(7), false, true)
	f.Fuzz(func(t *testing.T, data []byte, code, bits, lanes uint8, device, ndim int8, n0, n1 int16, off uint8, nullData, edge bool) {
		if len(data) > 1<<20 {
			return
		}
		shape, nd := fuzzDims(ndim, n0, n1)
		tt := newRawTensor(data, code, bits, lanes, int32(device), shape, nd, fuzzOffset(off, len(data)), nullData)
		defer tt.free()
		rc := testPartSetTime(p, tt, edge)
		switch rc {
		case gfOK:
			// Accepted: an int64 vector on the CPU of the right length.
			require.EqualValues(t, dlInt, code)
			require.EqualValues(t, 64, bits)
			require.EqualValues(t, 1, nd)
		case gfEInval, gfEType:
			require.NotEmpty(t, lastError())
		default:
			t.Fatalf("status %d: %s", rc, lastError())
		}
		n, rc := testPartOwned(p)
		require.Equal(t, gfOK, rc, "the part is still usable")
		require.Equal(t, owned, n)
	})
}

func FuzzSubgraphLoaderOpen(f *testing.F) {
	// 8 nodes, a ring both ways and a few chords.
	g, rc := testGraphFromCSC([]int64{0, 3, 5, 8, 10, 12, 14, 16, 19}, []int64{1, 7, 4, 0, 2, 1, 3, 6, 2, 4, 3, 5, 4, 6, 5, 7, 6, 0, 2}, 64)
	require.Equal(f, gfOK, rc, lastError())
	f.Cleanup(func() { testGraphClose(g) })

	f.Add(int8(0), int8(0), int8(0), int16(4), int8(0), int8(1), int8(2), int16(2), uint8(6), []byte{0, 2, 4}, []byte{}, false, uint64(1), false)
	f.Add(int8(1), int8(1), int8(1), int16(3), int8(0), int8(0), int8(0), int16(1), uint8(5), []byte{}, []byte{}, true, uint64(2), true)
	f.Add(int8(2), int8(0), int8(0), int16(2), int8(3), int8(2), int8(1), int16(3), uint8(7), []byte{}, []byte{}, true, uint64(3), false)
	f.Add(int8(3), int8(0), int8(0), int16(0), int8(0), int8(0), int8(0), int16(1), uint8(2), []byte{0, 3, 8}, []byte{0, 1, 2, 3, 4, 5, 6, 7}, false, uint64(4), false)
	f.Add(int8(3), int8(0), int8(0), int16(0), int8(0), int8(0), int8(0), int16(1), uint8(2), []byte{0, 3, 2}, []byte{9}, false, uint64(5), false)
	f.Fuzz(func(t *testing.T, kind, weighting, order int8, budget int16, walk, threads, queue int8, batch int16, items uint8,
		offsets, nodes []byte, shuffle bool, seed uint64, feature bool) {
		if len(offsets) > 32 || len(nodes) > 64 {
			return
		}
		conv := func(b []byte) *rawTensor {
			v := make([]int64, len(b))
			for i, x := range b {
				v[i] = int64(int8(x))
			}
			return newRawTensor(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v)), dlInt, 64, 1, 1, []int64{int64(len(v))}, 1, 0, false)
		}
		it := make([]byte, int(items)%16)
		for i := range it {
			it[i] = byte(i % 3)
		}
		itemsT := conv(it)
		defer itemsT.free()
		o := subgraphFuzz{Kind: int32(kind), Weighting: int32(weighting), EdgeOrder: int32(order), Budget: int64(budget),
			WalkLength: int64(walk), Threads: int32(threads), QueueCapacity: int32(queue), BatchSize: int64(batch),
			Shuffle: shuffle, Seed: seed}
		if len(offsets) > 0 {
			o.PartOffsets = conv(offsets)
			defer o.PartOffsets.free()
		}
		if len(nodes) > 0 {
			o.PartNodes = conv(nodes)
			defer o.PartNodes.free()
		}
		if feature {
			o.Feature = "nope"
		}
		l, rc := testSubgraphLoaderOpen(g, itemsT, o)
		if rc != gfOK {
			require.NotEmpty(t, lastError(), "status %d", rc)
			require.Contains(t, []int{gfEInval, gfEType, gfENoMem}, rc, lastError())
			require.Zero(t, l)
			return
		}
		defer testLoaderClose(l)
		for e := range uint64(2) {
			n, rc := testLoaderEpoch(l, e, 8)
			if rc != gfOK && rc != gfDone {
				require.NotEmpty(t, lastError(), "epoch %d: status %d after %d batches", e, rc, n)
			}
		}
		n, rc := testGraphNumNodes(g)
		require.Equal(t, gfOK, rc)
		require.Equal(t, int64(8), n)
	})
}

func FuzzCancelTokens(f *testing.F) {
	g, rc := testGraphFromCSC([]int64{0, 2, 3, 5, 6}, []int64{1, 2, 0, 3, 1, 2}, 64)
	require.Equal(f, gfOK, rc, lastError())
	f.Cleanup(func() { testGraphClose(g) })
	fake, freeFake := testNotAToken()
	f.Cleanup(freeFake)

	f.Add([]byte{0, 6, 3, 6, 1, 6, 2, 4, 6, 5})
	f.Add([]byte{0, 0, 8 + 3, 1, 6, 8 + 1, 2, 8 + 2, 5, 6, 7})
	f.Add([]byte{7, 0, 1, 3, 5, 6, 0, 3, 6})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			return
		}
		// A token is bound to the calling thread: the whole run on one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		type token struct {
			p         unsafe.Pointer
			requested bool
		}
		var pool []token
		bound := -1
		defer func() {
			require.Equal(t, gfOK, testCancelBind(nil))
			for _, tk := range pool {
				testCancelFree(tk.p)
			}
		}()
		for step, b := range ops {
			op, arg := b%8, int(b/8)
			pick := -1
			if len(pool) > 0 {
				pick = arg % len(pool)
			}
			switch {
			case op == 0 && len(pool) < 4:
				p, rc := testCancelNew()
				require.Equal(t, gfOK, rc)
				require.NotNil(t, p)
				pool = append(pool, token{p: p})
			case op == 1 && pick >= 0:
				require.Equal(t, gfOK, testCancelRequest(pool[pick].p))
				pool[pick].requested = true
			case op == 2 && pick >= 0:
				v, rc := testCancelIsRequested(pool[pick].p)
				require.Equal(t, gfOK, rc)
				require.Equal(t, pool[pick].requested, v == 1, "step %d", step)
			case op == 3 && pick >= 0:
				require.Equal(t, gfOK, testCancelBind(pool[pick].p))
				bound = pick
			case op == 4:
				require.Equal(t, gfOK, testCancelBind(nil))
				bound = -1
			case op == 5 && pick >= 0:
				testCancelFree(pool[pick].p) // unbinds it
				pool = append(pool[:pick], pool[pick+1:]...)
				switch {
				case bound == pick:
					bound = -1
				case bound > pick:
					bound--
				}
			case op == 6:
				rc := testWalk(g, []int64{0, 1, 2, 3}, 3)
				if bound >= 0 && pool[bound].requested {
					require.Equal(t, gfECanceled, rc, "step %d: %s", step, lastError())
					require.Contains(t, lastError(), "gf_cancel token")
				} else {
					require.Equal(t, gfOK, rc, "step %d: %s", step, lastError())
				}
			case op == 7:
				require.Equal(t, gfEInval, testCancelRequest(nil))
				_, rc := testCancelIsRequested(nil)
				require.Equal(t, gfEInval, rc)
				require.Equal(t, gfEInval, testCancelRequest(fake))
				require.Equal(t, gfEInval, testCancelBind(fake))
				require.Contains(t, lastError(), "not a gf_cancel token")
			}
		}
	})
}
