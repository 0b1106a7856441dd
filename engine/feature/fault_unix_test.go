//go:build unix

package feature

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
)

// mapTemp writes size bytes (byte i = i%251) to a file and maps it.
func mapTemp(t *testing.T, size int) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feat.bin")
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i % 251)
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(m) })
	return path, m
}

// TestGatherTruncatedMapping truncates a mapped feature file and gathers
// rows past its new end, serially and in parallel, through the store and
// directly: each read is an error naming the file (errs.ErrIO), the
// process survives, and rows before the cut still read.
func TestGatherTruncatedMapping(t *testing.T) {
	defer func(old int) { parallelBytes = old }(parallelBytes)
	parallelBytes = 4096
	const rows, width = 1024, 64 // 4-byte elements: 256 KiB, 64 pages
	path, m := mapTemp(t, rows*width*4)
	unregister := RegisterMapping(m, path)
	defer unregister()
	assert.Equal(t, path, MappedFile(m[100:200]))
	assert.Equal(t, "", MappedFile(make([]byte, 8)))
	assert.True(t, mem.OffHeap(m[100:200]), "a registered mapping is off the Go heap")
	assert.False(t, mem.OffHeap(make([]byte, 8)))

	s := NewStore(rows)
	require.NoError(t, s.Set("feat", mem.Tensor{DType: mem.Float32, Shape: []int64{rows, width}, Data: m}, nil))
	assert.Equal(t, path, s.File("feat"))
	ids := make([]int64, rows)
	for i := range ids {
		ids[i] = int64(rows - 1 - i)
	}
	dst := make([]byte, rows*width*4)
	require.NoError(t, s.Gather("feat", dst, ids, 4))

	require.NoError(t, os.Truncate(path, 4096)) // rows 0..3 survive
	for _, threads := range []int{1, 4} {
		err := s.Gather("feat", dst, ids, threads)
		require.ErrorIs(t, err, errs.ErrIO)
		require.ErrorIs(t, err, ErrFault)
		require.ErrorContains(t, err, path)
		require.ErrorContains(t, err, `gathering "feat"`)
		err = Gather(dst, mem.Tensor{DType: mem.Float32, Shape: []int64{rows, width}, Data: m}, ids, threads)
		require.ErrorIs(t, err, errs.ErrIO)
		require.ErrorContains(t, err, "truncated or replaced while mapped")
	}
	err := Copy(make([]byte, len(m)), m)
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, path)

	got := make([]byte, 2*width*4)
	require.NoError(t, s.Gather("feat", got, []int64{3, 0}, 1))
	assert.Equal(t, m[3*width*4:4*width*4], got[:width*4])

	unregister()
	assert.False(t, mem.OffHeap(m), "unregistering the mapping unmarks it")
	err = Copy(make([]byte, len(m)), m)
	require.ErrorIs(t, err, errs.ErrIO, "an unregistered mapping still faults into an error")
	assert.NotContains(t, err.Error(), path)
}

// TestGuardPassesOtherPanics checks that Guard only recovers memory faults.
func TestGuardPassesOtherPanics(t *testing.T) {
	assert.PanicsWithValue(t, "boom", func() { _ = Guard(func() { panic("boom") }) })
	require.NoError(t, Guard(func() {}))
}

// TestGatherWhileTruncated truncates the mapped file while gathers run on
// other goroutines: each gather in flight or later fails with an error, and
// none crashes the process.
func TestGatherWhileTruncated(t *testing.T) {
	defer func(old int) { parallelBytes = old }(parallelBytes)
	parallelBytes = 4096
	const rows, width = 2048, 64
	path, m := mapTemp(t, rows*width*4)
	defer RegisterMapping(m, path)()
	s := NewStore(rows)
	require.NoError(t, s.Set("feat", mem.Tensor{DType: mem.Float32, Shape: []int64{rows, width}, Data: m}, nil))
	ids := make([]int64, rows)
	for i := range ids {
		ids[i] = int64((i * 977) % rows)
	}
	started := make(chan struct{}, 4)
	errc := make(chan error, 4)
	for range 4 {
		go func() {
			dst := make([]byte, rows*width*4)
			for i := 0; ; i++ {
				if err := s.Gather("feat", dst, ids, 2); err != nil {
					errc <- err
					return
				}
				if i == 0 {
					started <- struct{}{}
				}
			}
		}()
	}
	for range 4 {
		<-started
	}
	require.NoError(t, os.Truncate(path, 8192))
	for range 4 {
		err := <-errc
		require.ErrorIs(t, err, errs.ErrIO)
		require.ErrorContains(t, err, path)
	}
}
