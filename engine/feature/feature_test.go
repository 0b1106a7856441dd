package feature

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allDTypes = []mem.DType{mem.Float32, mem.Float16, mem.BFloat16, mem.Float64, mem.Int64, mem.Int32, mem.Int8, mem.Uint8, mem.Bool}

// patterned returns a tensor whose every byte encodes (row, byte in row).
func patterned(dt mem.DType, shape ...int64) mem.Tensor {
	t := mem.Tensor{DType: dt, Shape: shape}
	b, _ := mem.Heap{}.Alloc(int(t.NumElements()) * dt.Size())
	t.Data = b
	rb := t.RowBytes()
	for i := range t.Data {
		t.Data[i] = byte(i/rb*31 + i%rb*7)
	}
	return t
}

func naiveGather(src mem.Tensor, ids []int64) []byte {
	rb := src.RowBytes()
	out := make([]byte, 0, len(ids)*rb)
	for _, id := range ids {
		out = append(out, src.Data[int(id)*rb:int(id+1)*rb]...)
	}
	return out
}

func TestGatherEveryDType(t *testing.T) {
	ids := []int64{4, 0, 4, 9, 2}
	for _, dt := range allDTypes {
		for _, shape := range [][]int64{{10}, {10, 3}, {10, 2, 5}, {10, 0}} {
			t.Run(fmt.Sprintf("%v/%v", dt, shape), func(t *testing.T) {
				src := patterned(dt, shape...)
				dst := make([]byte, len(ids)*src.RowBytes())
				require.NoError(t, Gather(dst, src, ids, 1))
				assert.Equal(t, naiveGather(src, ids), dst)
			})
		}
	}
}

func TestGatherUnalignedAndWideRows(t *testing.T) {
	src := patterned(mem.Int64, 50)
	buf := make([]byte, 8*3+1)
	dst := buf[1:] // not 8-byte aligned: generic path
	require.NoError(t, Gather(dst, src, []int64{7, 3, 49}, 1))
	assert.Equal(t, naiveGather(src, []int64{7, 3, 49}), dst)
	assert.Equal(t, uint64(binary.LittleEndian.Uint64(src.Data[56:64])), binary.LittleEndian.Uint64(dst[:8]))
}

func TestGatherParallelMatchesSerial(t *testing.T) {
	old := parallelBytes
	parallelBytes = 64
	defer func() { parallelBytes = old }()
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []mem.DType{mem.Float32, mem.BFloat16, mem.Int64, mem.Uint8} {
		src := patterned(dt, 1000, 3)
		ids := make([]int64, 777)
		for i := range ids {
			ids[i] = r.Int64N(1000)
		}
		for _, th := range []int{0, 1, 3, 16} {
			dst := make([]byte, len(ids)*src.RowBytes())
			require.NoError(t, Gather(dst, src, ids, th))
			assert.Equal(t, naiveGather(src, ids), dst, "%v threads=%d", dt, th)
		}
	}
}

func TestGatherErrors(t *testing.T) {
	src := patterned(mem.Float32, 4, 2)
	dst := make([]byte, 16)
	assert.EqualError(t, Gather(dst, src, []int64{0, 4}, 1), "feature: ids[1] = 4 is out of range [0, 4)")
	assert.EqualError(t, Gather(dst, src, []int64{-1, 0}, 1), "feature: ids[0] = -1 is out of range [0, 4)")
	assert.EqualError(t, Gather(dst[:15], src, []int64{0, 1}, 1), "feature: len(dst) = 15, want len(ids)*RowBytes = 2*8")
	assert.EqualError(t, Gather(dst, mem.Tensor{DType: mem.Invalid, Shape: []int64{1}}, nil, 1), "feature: src has invalid dtype dtype(0)")
	assert.EqualError(t, Gather(dst, mem.Tensor{DType: mem.Int8}, nil, 1), "feature: src has no dimensions (want Shape[0] = rows)")
	assert.EqualError(t, Gather(nil, mem.Tensor{DType: mem.Int8, Shape: []int64{3}, Data: make([]byte, 2)}, nil, 1),
		"feature: src has 2 bytes of data, want 3 for int8 [3]")
	assert.EqualError(t, Gather(nil, mem.Tensor{DType: mem.Int8, Shape: []int64{3, -1}}, nil, 1), "feature: src has Shape[1] = -1 (want >= 0)")
	assert.ErrorContains(t, Gather(nil, mem.Tensor{DType: mem.Int64, Shape: []int64{1 << 40, 1 << 40}}, nil, 1), "too large")
	assert.NoError(t, Gather(nil, src, nil, 1), "empty request")
}

func TestStoreSetGet(t *testing.T) {
	s := NewStore(5)
	assert.Equal(t, int64(5), s.NumNodes())
	feat := patterned(mem.BFloat16, 5, 4)
	label := patterned(mem.Int64, 5)
	require.NoError(t, s.Set("feat", feat, nil))
	require.NoError(t, s.Set("label", label, nil))
	assert.Equal(t, []string{"feat", "label"}, s.Names())
	got, ok := s.Get("feat")
	require.True(t, ok)
	assert.Equal(t, mem.BFloat16, got.DType, "dtype kept")
	assert.Equal(t, []int64{5, 4}, got.Shape)
	_, ok = s.Get("nope")
	assert.False(t, ok)

	dst := make([]byte, 2*8)
	require.NoError(t, s.Gather("label", dst, []int64{3, 1}, 0))
	assert.Equal(t, naiveGather(label, []int64{3, 1}), dst)
	assert.EqualError(t, s.Gather("nope", dst, []int64{3, 1}, 0), `feature: no node data named "nope"`)
	assert.EqualError(t, s.Gather("label", dst, []int64{3, 5}, 0), `feature: gathering "label": feature: ids[1] = 5 is out of range [0, 5)`)
}

func TestStoreSetErrors(t *testing.T) {
	s := NewStore(5)
	called := 0
	rel := func() { called++ }
	assert.EqualError(t, s.Set("", patterned(mem.Int64, 5), rel), "feature: name is empty")
	assert.EqualError(t, s.Set("x", patterned(mem.Int64, 4), rel), `feature: node data "x" has 4 rows (Shape[0]), want the store's 5 nodes`)
	assert.EqualError(t, s.Set("x", mem.Tensor{Shape: []int64{5}}, rel), `feature: node data "x" has invalid dtype dtype(0)`)
	assert.EqualError(t, s.Set("x", mem.Tensor{DType: mem.Float32, Shape: []int64{5}, Data: make([]byte, 19)}, rel),
		`feature: node data "x" has 19 bytes of data, want 20 for float32 [5]`)
	assert.Zero(t, called, "a rejected array is not released")
	assert.Empty(t, s.Names())
}

func TestStoreReleaseExactlyOnce(t *testing.T) {
	s := NewStore(3)
	counts := map[string]int{}
	var mu sync.Mutex
	rel := func(name string) func() {
		return func() { mu.Lock(); counts[name]++; mu.Unlock() }
	}
	require.NoError(t, s.Set("a", patterned(mem.Float32, 3), rel("a1")))
	require.NoError(t, s.Set("a", patterned(mem.Float16, 3, 2), rel("a2"))) // replaces a1
	assert.Equal(t, map[string]int{"a1": 1}, counts)
	require.NoError(t, s.Set("b", patterned(mem.Int64, 3), rel("b")))
	require.NoError(t, s.Set("c", patterned(mem.Int32, 3), nil))
	require.NoError(t, s.Delete("b"))
	assert.Equal(t, map[string]int{"a1": 1, "b": 1}, counts)
	assert.EqualError(t, s.Delete("b"), `feature: no node data named "b"`)
	s.Close()
	s.Close()
	assert.Equal(t, map[string]int{"a1": 1, "a2": 1, "b": 1}, counts)
	assert.EqualError(t, s.Set("d", patterned(mem.Int64, 3), rel("d")), "feature: store is closed")
	assert.EqualError(t, s.Delete("a"), "feature: store is closed")
	_, ok := s.Get("a")
	assert.False(t, ok)
	assert.Empty(t, s.Names())
	assert.Zero(t, counts["d"])
}

func TestConcurrentGather(t *testing.T) {
	old := parallelBytes
	parallelBytes = 256
	defer func() { parallelBytes = old }()
	const n = 2000
	s := NewStore(n)
	feat := patterned(mem.Float32, n, 16)
	require.NoError(t, s.Set("feat", feat, nil))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for it := 0; it < 20; it++ {
				ids := make([]int64, 300)
				for i := range ids {
					ids[i] = r.Int64N(n)
				}
				dst := make([]byte, len(ids)*feat.RowBytes())
				if err := s.Gather("feat", dst, ids, 4); err != nil {
					t.Error(err)
					return
				}
				if want := naiveGather(feat, ids); string(want) != string(dst) {
					t.Error("gather mismatch")
					return
				}
				src, _ := s.Get("feat")
				if err := Gather(dst, src, ids, 2); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	// Writers on other names meanwhile.
	for i := 0; i < 20; i++ {
		name := fmt.Sprint("tmp", i%3)
		require.NoError(t, s.Set(name, patterned(mem.Int8, n), nil))
		_ = s.Names()
	}
	wg.Wait()
}

func TestDeleteWaitsForStoreGather(t *testing.T) {
	// release scribbles over the array, as a real free would: under -race any
	// Store.Gather still reading it would be reported.
	const n = 4096
	s := NewStore(n)
	feat := patterned(mem.Float64, n, 8)
	require.NoError(t, s.Set("f", feat, func() { clear(feat.Data) }))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]int64, 512)
			for i := range ids {
				ids[i] = int64(i * 7 % n)
			}
			dst := make([]byte, len(ids)*64)
			for s.Gather("f", dst, ids, 1) == nil {
			}
		}()
	}
	require.NoError(t, s.Delete("f"))
	wg.Wait()
}

// TestSetRejectsUnlistableNames checks that names the C API could not list
// (joined by newlines into a C string) are refused.
func TestSetRejectsUnlistableNames(t *testing.T) {
	s := NewStore(2)
	tt := mem.Tensor{DType: mem.Uint8, Shape: []int64{2}, Data: []byte{1, 2}}
	for _, name := range []string{"a\nb", "a\x00b", "\n", ""} {
		require.Error(t, s.Set(name, tt, nil), "%q", name)
	}
	require.ErrorContains(t, s.Set("x\ny", tt, nil), "newline or NUL")
	require.NoError(t, s.Set("x y\t:é", tt, nil))
	assert.Equal(t, []string{"x y\t:é"}, s.Names())
}
